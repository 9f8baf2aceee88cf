import { ApiProperty } from '@nestjs/swagger';
import { PageResponseDto } from '../../../common/pagination/page';
import {
  BILLING_METHODS,
  BILLING_STATUSES,
  Billing,
  BillingMethod,
  BillingStatus,
} from '../entities/billing.entity';
import { SUMMARY_INTERVALS, SummaryInterval } from './billing-requests.dto';

export class ProofFileDto {
  /** Sanitised file name. */
  name: string;
  /** Content type detected from the file's first bytes. */
  type: string;
  /** Bytes. */
  size: number;
  uploadedAt: Date;
}

/** A billing (invoice) with the package snapshot taken when it was created; never the proof bytes. */
export class BillingDto {
  uuid: string;
  /** e.g. INV/2026/11/000123 */
  number: string;
  companyUuid: string;
  packageUuid: string;
  packageName: string;
  /** Messages per period, as the package said when the billing was created. */
  quota: number;
  /** Integer minor units of `currency`. */
  amount: number;
  currency: string;
  @ApiProperty({ enum: BILLING_METHODS }) method: BillingMethod;
  @ApiProperty({ enum: BILLING_STATUSES }) status: BillingStatus;
  paymentUrl: string | null;
  gatewayInvoiceId: string | null;
  /** Unique; sent to the gateway as `external_id` and echoed back in its callbacks (the invoice number). */
  externalId: string;
  expiresAt: Date;
  paidAt: Date | null;
  paidAmount: number | null;
  paymentChannel: string | null;
  @ApiProperty({ type: ProofFileDto, nullable: true }) proofFile: ProofFileDto | null;
  rejectedReason: string | null;
  createdAt: Date;

  /** `billing.company` and `billing.package` must be loaded (at least their uuid). */
  static from(b: Billing): BillingDto {
    return {
      uuid: b.uuid,
      number: b.number,
      companyUuid: b.company.uuid,
      packageUuid: b.package.uuid,
      packageName: b.packageName,
      quota: b.packageQuota,
      amount: b.amount,
      currency: b.currency,
      method: b.method,
      status: b.status,
      paymentUrl: b.paymentUrl,
      gatewayInvoiceId: b.gatewayInvoiceId,
      externalId: b.externalId,
      expiresAt: b.expiresAt,
      paidAt: b.paidAt,
      paidAmount: b.paidAmount,
      paymentChannel: b.paymentChannel,
      proofFile:
        b.proofFileName && b.proofFileType && b.proofUploadedAt
          ? {
              name: b.proofFileName,
              type: b.proofFileType,
              size: b.proofFileSize ?? 0,
              uploadedAt: b.proofUploadedAt,
            }
          : null,
      rejectedReason: b.rejectedReason,
      createdAt: b.createdAt,
    };
  }
}

export class BillingPageDto extends PageResponseDto {
  @ApiProperty({ type: [BillingDto] }) items: BillingDto[];
}

export class BillingCompanyDto {
  uuid: string;
  name: string;
}

/** What admins see: the billing with its company and the review trail. */
export class AdminBillingDto extends BillingDto {
  company: BillingCompanyDto;
  reviewNote: string | null;
  refundReason: string | null;
  reviewedByAdminUuid: string | null;
  updatedAt: Date;

  static forAdmin(b: Billing): AdminBillingDto {
    return {
      ...BillingDto.from(b),
      company: { uuid: b.company.uuid, name: b.company.name },
      reviewNote: b.reviewNote,
      refundReason: b.refundReason,
      reviewedByAdminUuid: b.reviewedByAdminUuid,
      updatedAt: b.updatedAt,
    };
  }
}

export class AdminBillingPageDto extends PageResponseDto {
  @ApiProperty({ type: [AdminBillingDto] }) items: AdminBillingDto[];
}

export class RevenueRowDto {
  /** `YYYY-MM` (interval month) or `YYYY-MM-DD` (interval day), UTC. */
  period: string;
  currency: string;
  /** Sum of the paid amounts, minor units. */
  amount: number;
  /** Billings counted. */
  count: number;
}

export class RevenueTotalDto {
  currency: string;
  /** Paid billings (not refunded) whose payment falls in the window. */
  revenue: number;
  paidCount: number;
  /** Billings paid in the window and refunded since. */
  refunded: number;
  refundedCount: number;
}

export class BillingStatusCountsDto {
  pending: number;
  awaiting_review: number;
  paid: number;
  refunded: number;
  expired: number;
  cancelled: number;
}

export class RevenueSummaryDto {
  /** Start of the window (inclusive). */
  from: Date;
  /** End of the window (exclusive). */
  to: Date;
  @ApiProperty({ enum: SUMMARY_INTERVALS }) interval: SummaryInterval;
  /** Revenue of paid billings by `paidAt` period and currency (refunded billings excluded). */
  @ApiProperty({ type: [RevenueRowDto] }) revenue: RevenueRowDto[];
  /** Billings paid in the window and refunded since, by `paidAt` period and currency. */
  @ApiProperty({ type: [RevenueRowDto] }) refunds: RevenueRowDto[];
  @ApiProperty({ type: [RevenueTotalDto] }) totals: RevenueTotalDto[];
  /** Billings created in the window, per current status. */
  @ApiProperty({ type: BillingStatusCountsDto }) counts: BillingStatusCountsDto;
}
