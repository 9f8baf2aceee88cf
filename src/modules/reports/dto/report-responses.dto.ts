import {
  BOUNCE_CATEGORIES,
  BOUNCE_TYPES,
  type BounceCategory,
  type BounceType,
} from '../../deliverability/bounce-classifier';
import { MAILBOX_PROVIDERS, type MailboxProvider } from '../../deliverability/mailbox-providers';
import { ApiProperty } from '@nestjs/swagger';
import { CLEAN_STATUSES, type CleanStatus } from '../../log-index/clean-record';

/** Clean records of a window: `processed` = all of them, one count per current status, the opened/clicked flags. */
export class ReportCountsDto {
  processed: number;
  sent: number;
  delivered: number;
  deferred: number;
  bounced: number;
  rejected: number;
  expired: number;
  complained: number;
  opened: number;
  clicked: number;
}

/** Fractions of `processed` (0 when it is 0): delivery = (sent + delivered + complained), bounce, complaint. */
export class ReportRatesDto {
  delivery: number;
  bounce: number;
  complaint: number;
}

export class SeriesPointDto extends ReportCountsDto {
  /** The first day of the period (`YYYY-MM-DD`, UTC; a week starts on Monday). */
  date: string;
}

export class ReportSummaryDto {
  totals: ReportCountsDto;
  rates: ReportRatesDto;
  /** Every period of the window, empty ones included, oldest first. */
  @ApiProperty({ type: [SeriesPointDto] }) series: SeriesPointDto[];
}

export class CleanEventDto {
  @ApiProperty({ format: 'date-time' }) at: string;
  /** A Postfix status or a provider event (`delivered`, `opened`, …). */
  status: string;
  @ApiProperty({ type: String, nullable: true }) dsn: string | null;
  @ApiProperty({ type: String, nullable: true }) response: string | null;
}

/** Why a failure failed (deliverability.md "Bounce classes"). */
export class BounceDto {
  /** `hard`: the recipient is the problem; `soft`: temporary; `block`: the sender is the problem. */
  @ApiProperty({ enum: BOUNCE_TYPES }) type: BounceType;
  @ApiProperty({ enum: BOUNCE_CATEGORIES }) category: BounceCategory;
  /** The rule that matched, e.g. `gmail-unsolicited`, `rfc3463-5.1.1`. */
  rule: string;
}

/** One clean record (resources.md "Clean log"). */
export class CleanLogDto {
  /** SHA-256 of host + queue id + recipient (64 hex characters). */
  id: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) companyUuid: string | null;
  host: string;
  @ApiProperty({ type: String, nullable: true }) queueId: string | null;
  @ApiProperty({ type: String, nullable: true }) messageId: string | null;
  from: string;
  to: string;
  @ApiProperty({ type: String, nullable: true }) origTo: string | null;
  @ApiProperty({ enum: CLEAN_STATUSES }) status: CleanStatus;
  @ApiProperty({ type: String, nullable: true }) dsn: string | null;
  @ApiProperty({ type: String, nullable: true }) response: string | null;
  @ApiProperty({ type: String, nullable: true }) relay: string | null;
  /** Seconds. */
  @ApiProperty({ type: Number, nullable: true }) delay: number | null;
  @ApiProperty({ type: Number, nullable: true }) size: number | null;
  @ApiProperty({ type: String, nullable: true }) clientIp: string | null;
  @ApiProperty({ type: String, nullable: true }) saslUsername: string | null;
  @ApiProperty({ type: String, nullable: true }) remoteQueueId: string | null;
  attempts: number;
  opened: boolean;
  clicked: boolean;
  firstSeenAt: Date;
  lastEventAt: Date;
  @ApiProperty({ type: [CleanEventDto] }) events: CleanEventDto[];
  /** The message of `/api/v1/emails` it belongs to; null for SMTP mail. */
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) emailId: string | null;
  /** The mailbox provider: by the recipient's domain, else by the next hop. */
  @ApiProperty({ enum: MAILBOX_PROVIDERS }) provider: MailboxProvider;
  /** For a failure (`deferred`, `bounced`, `expired`); null otherwise. */
  @ApiProperty({ type: BounceDto, nullable: true }) bounce: BounceDto | null;
}

export class LogsMetaDto {
  limit: number;
  /** Pass as `cursor` for the next page; null on the last page. */
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
  totalItems: number;
}

export class LogsPageDto {
  @ApiProperty({ type: [CleanLogDto] }) items: CleanLogDto[];
  meta: LogsMetaDto;
}

export class DomainReportDto {
  /** The sender domain; null for the null sender (bounces). */
  @ApiProperty({ type: String, nullable: true }) domain: string | null;
  counts: ReportCountsDto;
  rates: ReportRatesDto;
}

export class DomainsReportDto {
  @ApiProperty({ type: [DomainReportDto] }) items: DomainReportDto[];
}

export class BounceReasonDto {
  @ApiProperty({ type: String, nullable: true }) dsn: string | null;
  count: number;
  /** One remote reply with this DSN. */
  @ApiProperty({ type: String, nullable: true }) example: string | null;
}

export class BounceDomainDto {
  domain: string;
  count: number;
}

export class BouncesReportDto {
  /** Top 20 bounce reasons by DSN. */
  @ApiProperty({ type: [BounceReasonDto] }) reasons: BounceReasonDto[];
  /** Top 20 recipient domains bounced. */
  @ApiProperty({ type: [BounceDomainDto] }) domains: BounceDomainDto[];
}

export class QuotaUseDto {
  limit: number;
  used: number;
  remaining: number;
}

export class CompanyReportDto {
  @ApiProperty({ format: 'uuid' }) companyUuid: string;
  name: string;
  counts: ReportCountsDto;
  rates: ReportRatesDto;
  quota: QuotaUseDto;
}

export class CompaniesReportDto {
  @ApiProperty({ type: [CompanyReportDto] }) items: CompanyReportDto[];
}
