import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PageResponseDto } from '../../../common/pagination/page';
import {
  type Billing,
  BILLING_METHODS,
  BILLING_STATUSES,
  type BillingMethod,
  type BillingStatus,
} from '../../billings/entities/billing.entity';
import { CompanyDto, MemberDto } from './company-response.dto';

/** The latest billing of a company, in short. */
export class BillingSummaryDto {
  uuid: string;
  number: string;
  packageName: string;
  amount: number;
  currency: string;
  @ApiProperty({ enum: BILLING_METHODS }) method: BillingMethod;
  @ApiProperty({ enum: BILLING_STATUSES }) status: BillingStatus;
  paidAt: Date | null;
  createdAt: Date;

  static from(billing: Billing): BillingSummaryDto {
    return {
      uuid: billing.uuid,
      number: billing.number,
      packageName: billing.packageName,
      amount: billing.amount,
      currency: billing.currency,
      method: billing.method,
      status: billing.status,
      paidAt: billing.paidAt,
      createdAt: billing.createdAt,
    };
  }
}

/** `GET /admins/companies/:uuid`: the company as customers see it, with its users and activity. */
export class AdminCompanyDetailDto extends CompanyDto {
  crmAccountId: string | null;
  @ApiProperty({ type: [MemberDto] }) users: MemberDto[];
  /** How many sender domains the company has added (any status). */
  domainsCount: number;
  @ApiPropertyOptional({ type: BillingSummaryDto, nullable: true }) lastBilling: BillingSummaryDto | null;
}

export class CompanyPageDto extends PageResponseDto {
  @ApiProperty({ type: [CompanyDto] }) items: CompanyDto[];
}

export class ScriptUrlDto {
  /** `{PUBLIC_URL}/public/company/script/<token>`; the previous URL stops working. */
  scriptUrl: string;
}
