import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PageResponseDto } from '../../../common/pagination/page';
import {
  SUPPRESSION_REASONS,
  SUPPRESSION_SOURCES,
  SuppressionEntry,
  SuppressionReason,
  SuppressionSource,
} from '../entities/suppression-entry.entity';

export class SuppressionEntryDto {
  uuid: string;
  /** Null for the global list. */
  companyUuid: string | null;
  email: string;
  @ApiProperty({ enum: SUPPRESSION_REASONS }) reason: SuppressionReason;
  @ApiProperty({ enum: SUPPRESSION_SOURCES }) source: SuppressionSource;
  detail: string | null;
  /** Null: never expires. */
  expiresAt: Date | null;
  createdAt: Date;

  /** `entry.company` must be loaded (or null for the global list). */
  static from(entry: SuppressionEntry): SuppressionEntryDto {
    return {
      uuid: entry.uuid,
      companyUuid: entry.company?.uuid ?? null,
      email: entry.email,
      reason: entry.reason,
      source: entry.source,
      detail: entry.detail,
      expiresAt: entry.expiresAt,
      createdAt: entry.createdAt,
    };
  }
}

export class SuppressionPageDto extends PageResponseDto {
  @ApiProperty({ type: [SuppressionEntryDto] }) items: SuppressionEntryDto[];
}

export class SuppressionAddedDto {
  /** New entries (an expired entry renewed counts as added). */
  added: number;
  /** Addresses already on the list. */
  existing: number;
  /** Addresses that are not e-mail addresses, as given. */
  invalid: string[];
}

export class SuppressionCheckDto {
  /** True when the company's list or the global list holds the address (and it has not expired). */
  suppressed: boolean;
  /** The entry that applies: the company's own first, else the global one. */
  @ApiPropertyOptional({ type: SuppressionEntryDto }) entry?: SuppressionEntryDto;
  /** True when the address is on the global list. */
  global: boolean;
}
