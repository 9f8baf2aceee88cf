import { ApiProperty } from '@nestjs/swagger';

export class JobRunDto {
  job: string;
  /** False when the job threw (the error is logged, not returned). */
  ok: boolean;
  /** How many things the job changed (0 when it failed or was skipped). */
  affected: number;
  /** Wall time in milliseconds. */
  ms: number;
  /**
   * True when the job did not run because it is already running: on another replica (its
   * PostgreSQL advisory lock is held) or in this process. A skip is not a failure (`ok` true).
   */
  skipped: boolean;
}

export class JobRunListDto {
  @ApiProperty({ type: [JobRunDto] }) items: JobRunDto[];
}
