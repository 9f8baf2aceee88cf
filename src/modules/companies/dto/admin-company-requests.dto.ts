import { ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsDateString,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto';
import { COMPANY_STATUSES, CompanyStatus } from '../entities/company.entity';
import { RELAY_STATUSES, RelayStatus } from '../relay-status';
import { Omittable } from '../../../common/validation/presence';

const INT32_MAX = 2_147_483_647;

/** `PATCH /admins/companies/:uuid`: each field given is one change, recorded in the company's audit events. */
export class AdminUpdateCompanyDto {
  @ApiPropertyOptional({ enum: COMPANY_STATUSES })
  @Omittable()
  @IsIn(COMPANY_STATUSES)
  status?: CompanyStatus;

  /** Why the company is suspended (with `status: suspended`, or alone for an already suspended company). */
  @Omittable()
  @IsString()
  @IsNotEmpty()
  @MaxLength(500)
  suspendedReason?: string;

  /** Overrides the messages allowed in the current period. */
  @Omittable()
  @IsInt()
  @Min(0)
  @Max(INT32_MAX)
  quota?: number;

  /** A new end of the current period: in the future and later than the current end (extend only). */
  @Omittable()
  @IsDateString({ strict: true, strictSeparator: true })
  periodEnd?: string;

  /** Assigns this package without payment: a new period starts now (or the running one is extended, as a payment would). */
  @Omittable()
  @IsUUID()
  packageUuid?: string;
}

/** Entity property paths (not column names): TypeORM needs them to order a paginated query. */
export const COMPANY_SORT_FIELDS = {
  createdAt: 'company.createdAt',
  name: 'company.name',
  periodEnd: 'company.periodEnd',
  used: 'company.used',
} as const;

export class ListCompaniesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: COMPANY_STATUSES })
  @Omittable()
  @IsIn(COMPANY_STATUSES)
  status?: CompanyStatus;

  @ApiPropertyOptional({ enum: RELAY_STATUSES })
  @Omittable()
  @IsIn(RELAY_STATUSES)
  relayStatus?: RelayStatus;

  @Omittable()
  @IsUUID()
  packageUuid?: string;

  /** Matches the company name, the relay username or any of its users' e-mail addresses. */
  @Omittable()
  @IsString()
  @MaxLength(100)
  search?: string;

  /** `field:asc|desc`; fields: createdAt, name, periodEnd, used. Default `createdAt:desc`. */
  @Omittable()
  @IsString()
  @MaxLength(40)
  sort?: string;
}
