import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsString, IsUUID, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto';
import { BILLING_METHODS, BILLING_STATUSES, BillingMethod, BillingStatus } from '../entities/billing.entity';
import { IsDateFilter } from '../../../common/validation/date-filter';
import { Omittable } from '../../../common/validation/presence';

export class CreateBillingDto {
  /** An active, public package (GET /api/v1/billings/packages). */
  @IsUUID()
  packageUuid: string;

  @ApiProperty({ enum: BILLING_METHODS })
  @IsIn(BILLING_METHODS)
  method: BillingMethod;
}

export class ListBillingsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: BILLING_STATUSES })
  @Omittable()
  @IsIn(BILLING_STATUSES)
  status?: BillingStatus;
}

/** Entity property paths, for a whitelisted `sort`. */
export const BILLING_SORT_FIELDS = {
  createdAt: 'billing.createdAt',
  paidAt: 'billing.paidAt',
  amount: 'billing.amount',
  number: 'billing.number',
} as const;
const SORT_VALUES = Object.keys(BILLING_SORT_FIELDS).flatMap((f) => [`${f}:asc`, `${f}:desc`]);

export class AdminListBillingsQueryDto extends ListBillingsQueryDto {
  @Omittable()
  @IsUUID()
  companyUuid?: string;

  @ApiPropertyOptional({ enum: BILLING_METHODS })
  @Omittable()
  @IsIn(BILLING_METHODS)
  method?: BillingMethod;

  /** Created at or after: `YYYY-MM-DD` (UTC) or an ISO 8601 timestamp. */
  @Omittable()
  @IsDateFilter()
  from?: string;

  /** Created at or before (a date covers its whole day). */
  @Omittable()
  @IsDateFilter()
  to?: string;

  /** `field:asc|desc`; fields: createdAt, paidAt, amount, number. Default `createdAt:desc`. */
  @ApiPropertyOptional({ enum: SORT_VALUES })
  @Omittable()
  @IsString()
  @IsIn(SORT_VALUES)
  sort?: string;
}

export class ApproveBillingDto {
  /** Kept on the billing as the review note. */
  @Omittable()
  @IsString()
  @MaxLength(1000)
  note?: string;
}

export class RejectBillingDto {
  /** Shown to the customer, who may upload a new proof. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(1000)
  reason: string;
}

export class RefundBillingDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(1000)
  reason: string;
}

export const SUMMARY_INTERVALS = ['month', 'day'] as const;
export type SummaryInterval = (typeof SUMMARY_INTERVALS)[number];

export class RevenueSummaryQueryDto {
  /** `YYYY-MM-DD` (UTC) or an ISO 8601 timestamp; the window is at most 366 days. */
  @IsDateFilter()
  from: string;

  /** Inclusive (a date covers its whole day). */
  @IsDateFilter()
  to: string;

  @ApiPropertyOptional({ enum: SUMMARY_INTERVALS, default: 'month' })
  @Omittable()
  @IsIn(SUMMARY_INTERVALS)
  interval?: SummaryInterval;
}
