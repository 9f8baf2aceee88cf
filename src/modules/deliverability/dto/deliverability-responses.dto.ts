import { ApiProperty } from '@nestjs/swagger';
import { BOUNCE_CATEGORIES, BOUNCE_TYPES, type BounceCategory, type BounceType } from '../bounce-classifier';
import { MAILBOX_PROVIDERS, type MailboxProvider } from '../mailbox-providers';
import {
  ALERT_KINDS,
  ALERT_LEVELS,
  type AlertKind,
  type AlertLevel,
} from '../entities/deliverability-alert.entity';

export class BouncedByTypeDto {
  /** The recipient is the problem (unknown, disabled, bad domain). */
  hard: number;
  /** Temporary (mailbox full, rate limits, connection trouble) and given up. */
  soft: number;
  /** The sender is the problem (reputation, authentication, content, policy). */
  block: number;
}

export class CategoryCountDto {
  @ApiProperty({ enum: BOUNCE_CATEGORIES }) category: BounceCategory;
  count: number;
}

export class ProviderReportItemDto {
  @ApiProperty({ enum: MAILBOX_PROVIDERS }) provider: MailboxProvider;
  /** Handed over and accepted by the provider: `sent`, `delivered` and `complained` records. */
  sent: number;
  /** Reported delivered by the mail provider (`delivered` and `complained`). */
  delivered: number;
  /** Still being retried. */
  deferred: number;
  /** Failed for good (`bounced`, `expired`), by bounce type. */
  bounced: BouncedByTypeDto;
  complained: number;
  /** Bounced / (sent + deferred + bounced), a fraction. */
  bounceRate: number;
  /** Complained / sent, a fraction (as Gmail's Postmaster Tools reckon it). */
  complaintRate: number;
  /** The failures' (deferred ones' included) most frequent categories, at most 5. */
  @ApiProperty({ type: [CategoryCountDto] }) topCategories: CategoryCountDto[];
}

export class ProvidersReportDto {
  @ApiProperty({ type: [ProviderReportItemDto] }) items: ProviderReportItemDto[];
}

export class BounceSampleDto {
  /** The latest reply the rule matched. */
  @ApiProperty({ type: String, nullable: true }) response: string | null;
  /** The rule that matched it, e.g. `gmail-auth-5.7.26`. */
  rule: string;
}

export class BounceCategoryItemDto {
  @ApiProperty({ enum: BOUNCE_CATEGORIES }) category: BounceCategory;
  @ApiProperty({ enum: BOUNCE_TYPES }) type: BounceType;
  count: number;
  /** Of the category's most frequent rule. */
  @ApiProperty({ type: BounceSampleDto }) sample: BounceSampleDto;
}

export class BounceCategoriesReportDto {
  @ApiProperty({ type: [BounceCategoryItemDto] }) items: BounceCategoryItemDto[];
}

export class AlertSampleDto {
  @ApiProperty({ type: String, nullable: true }) response: string | null;
  @ApiProperty({ type: String, nullable: true }) rule: string | null;
}

/** An alert of deliverability.md "Alerts". */
export class AlertDto {
  @ApiProperty({ format: 'uuid' }) uuid: string;
  @ApiProperty({ format: 'uuid' }) companyUuid: string;
  @ApiProperty({ enum: MAILBOX_PROVIDERS }) provider: MailboxProvider;
  @ApiProperty({ enum: ALERT_KINDS }) kind: AlertKind;
  @ApiProperty({ enum: ALERT_LEVELS }) level: AlertLevel;
  /** The rate when last evaluated, a fraction (0.012 = 1.2 %). */
  value: number;
  /** The threshold of its level, a fraction. */
  threshold: number;
  openedAt: Date;
  @ApiProperty({ type: Date, nullable: true }) resolvedAt: Date | null;
  /** The most frequent reply and its rule (none for complaint rates). */
  @ApiProperty({ type: AlertSampleDto }) sample: AlertSampleDto;
}

export class AlertsReportDto {
  @ApiProperty({ type: [AlertDto] }) items: AlertDto[];
}
