import { ApiProperty } from '@nestjs/swagger';

export class LiveDto {
  @ApiProperty({ enum: ['ok'] }) status: 'ok';
}

export class HealthChecksDto {
  @ApiProperty({ enum: ['up', 'down'] }) database: 'up' | 'down';
  /** The clean-log index in use (`sql`, `elasticsearch`), or `down` when it does not answer. */
  @ApiProperty({ enum: ['sql', 'elasticsearch', 'down'] }) index: 'sql' | 'elasticsearch' | 'down';
  @ApiProperty({ enum: ['smtp', 'log'] }) mail: 'smtp' | 'log';
}

export class HealthDto {
  @ApiProperty({ enum: ['ok'] }) status: 'ok';
  @ApiProperty({ type: HealthChecksDto }) checks: HealthChecksDto;
}
