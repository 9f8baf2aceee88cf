import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsEmail,
  IsIn,
  IsISO8601,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
} from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto';
import { NormalizeEmail } from '../../../common/validation/query-transforms';
import {
  SUPPRESSION_REASONS,
  SuppressionReason,
  USER_SUPPRESSION_REASONS,
  UserSuppressionReason,
} from '../entities/suppression-entry.entity';
import { Omittable } from '../../../common/validation/presence';

/** How many addresses one request may add. */
export const MAX_SUPPRESSION_BATCH = 1000;

export class ListSuppressionQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: SUPPRESSION_REASONS })
  @Omittable()
  @IsIn(SUPPRESSION_REASONS)
  reason?: SuppressionReason;

  /** Part of the address, case-insensitive. */
  @Omittable()
  @IsString()
  @MaxLength(320)
  search?: string;
}

/** Addresses that do not parse are reported back in `invalid`, not refused as a whole. */
abstract class SuppressionEmailsDto {
  /** 1 to 1,000 addresses; compared trimmed and lower-cased. */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_SUPPRESSION_BATCH)
  @IsString({ each: true })
  @MaxLength(320, { each: true })
  emails: string[];
}

export class AddSuppressionDto extends SuppressionEmailsDto {
  @ApiPropertyOptional({ enum: USER_SUPPRESSION_REASONS, default: 'manual' })
  @Omittable()
  @IsIn(USER_SUPPRESSION_REASONS)
  reason?: UserSuppressionReason;

  @Omittable()
  @IsString()
  @MaxLength(500)
  detail?: string;
}

export class CheckSuppressionQueryDto {
  @NormalizeEmail()
  @IsEmail()
  @MaxLength(320)
  email: string;
}

export class AdminListSuppressionQueryDto extends ListSuppressionQueryDto {
  /** A company's uuid, or `global` for the global list; none: every list. */
  @Omittable()
  @Matches(/^(global|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i, {
    message: 'companyUuid must be a UUID or "global"',
  })
  companyUuid?: string;
}

export class AdminAddSuppressionDto extends SuppressionEmailsDto {
  /** The company whose list this is; none: the global list. */
  @Omittable()
  @IsUUID()
  companyUuid?: string;

  @ApiProperty({ enum: SUPPRESSION_REASONS })
  @IsIn(SUPPRESSION_REASONS)
  reason: SuppressionReason;

  @Omittable()
  @IsString()
  @MaxLength(500)
  detail?: string;

  /** ISO 8601, in the future; none: never expires. */
  @Omittable()
  @IsISO8601({ strict: true })
  expiresAt?: string;
}
