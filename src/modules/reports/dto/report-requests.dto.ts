import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsString, IsUUID, Matches, Max, MaxLength, Min } from 'class-validator';
import { IsDateFilter } from '../../../common/validation/date-filter';
import { Omittable } from '../../../common/validation/presence';
import { QueryInt } from '../../../common/validation/query-transforms';
import { BOUNCE_CATEGORIES, type BounceCategory } from '../../deliverability/bounce-classifier';
import { MAILBOX_PROVIDERS, type MailboxProvider } from '../../deliverability/mailbox-providers';
import { CLEAN_STATUSES, type CleanStatus } from '../../log-index/clean-record';

export const REPORT_INTERVALS = ['day', 'week', 'month'] as const;
export type ReportInterval = (typeof REPORT_INTERVALS)[number];
export const COMPANY_SORTS = ['processed:desc', 'bounceRate:desc', 'complaintRate:desc'] as const;
export type CompanySort = (typeof COMPANY_SORTS)[number];

/** The window of a report, on each record's last event: at most 366 days. */
export class ReportWindowQueryDto {
  /** `YYYY-MM-DD` (UTC) or an ISO 8601 timestamp. */
  @IsDateFilter()
  from: string;

  /** Inclusive (a date covers its whole day). */
  @IsDateFilter()
  to: string;
}

export class SummaryQueryDto extends ReportWindowQueryDto {
  @ApiPropertyOptional({ enum: REPORT_INTERVALS, default: 'day' })
  @Omittable()
  @IsIn(REPORT_INTERVALS)
  interval?: ReportInterval;

  /** Only messages from this sender domain. */
  @Omittable()
  @IsString()
  @MaxLength(255)
  senderDomain?: string;
}

export class AdminSummaryQueryDto extends SummaryQueryDto {
  /** One company; none = the whole platform. */
  @Omittable()
  @IsUUID()
  companyUuid?: string;
}

/** The filters of the clean log (also those of its CSV export). */
export class LogFilterQueryDto extends ReportWindowQueryDto {
  @ApiPropertyOptional({ enum: CLEAN_STATUSES })
  @Omittable()
  @IsIn(CLEAN_STATUSES)
  status?: CleanStatus;

  /** The recipient address, exactly (case-insensitive). */
  @Omittable()
  @IsString()
  @MaxLength(320)
  recipient?: string;

  /** The envelope sender, exactly (case-insensitive). */
  @Omittable()
  @IsString()
  @MaxLength(320)
  sender?: string;

  /** The Message-ID header, without angle brackets. */
  @Omittable()
  @IsString()
  @MaxLength(500)
  messageId?: string;

  /** The Postfix queue id. */
  @Omittable()
  @IsString()
  @Matches(/^[0-9A-Za-z]{5,20}$/, { message: 'queueId must be a Postfix queue id' })
  queueId?: string;

  /** A part of the recipient, the sender, the message id or the queue id. */
  @Omittable()
  @IsString()
  @MaxLength(200)
  search?: string;

  /** Only records of this mailbox provider (deliverability.md "Mailbox providers"). */
  @ApiPropertyOptional({ enum: MAILBOX_PROVIDERS })
  @Omittable()
  @IsIn(MAILBOX_PROVIDERS)
  provider?: MailboxProvider;

  /** Only failures of this bounce category (deliverability.md "Bounce classes"). */
  @ApiPropertyOptional({ enum: BOUNCE_CATEGORIES })
  @Omittable()
  @IsIn(BOUNCE_CATEGORIES)
  category?: BounceCategory;
}

export class LogsQueryDto extends LogFilterQueryDto {
  /** Records per page, 1..100. */
  @ApiPropertyOptional({ default: 50 })
  @Omittable()
  @QueryInt()
  @IsInt()
  @Min(1)
  @Max(100)
  limit: number = 50;

  /** `meta.nextCursor` of the previous page; opaque. */
  @Omittable()
  @IsString()
  @MaxLength(500)
  cursor?: string;
}

export class AdminLogsQueryDto extends LogsQueryDto {
  /** One company; none = every company. */
  @Omittable()
  @IsUUID()
  companyUuid?: string;
}

export class CompaniesReportQueryDto extends ReportWindowQueryDto {
  @ApiPropertyOptional({ enum: COMPANY_SORTS, default: 'processed:desc' })
  @Omittable()
  @IsIn(COMPANY_SORTS)
  sort?: CompanySort;
}
