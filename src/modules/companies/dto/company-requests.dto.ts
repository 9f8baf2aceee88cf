import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsEmail,
  IsISO31661Alpha2,
  IsNotEmpty,
  IsString,
  IsUrl,
  Matches,
  MaxLength,
  ValidateBy,
  ValidateIf,
} from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto';
import { NormalizeEmail } from '../../../common/validation/query-transforms';
import { allowedIpProblem, MAX_ALLOWED_IPS } from '../allowed-ips';
import { IsDateFilter } from '../../../common/validation/date-filter';
import { Omittable, Nullable } from '../../../common/validation/presence';

const PHONE = /^\+?[0-9][0-9 ()./-]{3,31}$/;

/** Upper-cases a country code so `id` and `ID` are the same country. */
const UpperCase = () =>
  Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.toUpperCase() : value));

/**
 * `PATCH /companies/:companyUuid`. Optional text fields may be cleared with `null` or `""`;
 * `name` and `country` may be changed but never cleared.
 */
export class UpdateCompanyDto {
  @Omittable()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name?: string;

  @Nullable()
  @IsString()
  @MaxLength(200)
  legalName?: string | null;

  @Nullable()
  @IsString()
  @MaxLength(64)
  taxId?: string | null;

  @Nullable()
  @IsString()
  @MaxLength(500)
  address?: string | null;

  @Nullable()
  @IsString()
  @MaxLength(100)
  city?: string | null;

  /** ISO 3166-1 alpha-2, e.g. `ID`. */
  @Omittable()
  @UpperCase()
  @IsISO31661Alpha2({ message: 'country must be an ISO 3166-1 alpha-2 code' })
  country?: string;

  @Nullable()
  @ValidateIf((o: UpdateCompanyDto) => o.phone !== '')
  @IsString()
  @Matches(PHONE, { message: 'phone must be a phone number' })
  phone?: string | null;

  /** `https://…` (the scheme may be left out). */
  @Nullable()
  @ValidateIf((o: UpdateCompanyDto) => o.website !== '')
  @IsString()
  @MaxLength(255)
  @IsUrl({ protocols: ['http', 'https'], require_tld: true }, { message: 'website must be an http(s) URL' })
  website?: string | null;
}

export class UsageQueryDto {
  /** First day, inclusive (`YYYY-MM-DD` or a timestamp; UTC). Default: the start of the current period, or 30 days ago. */
  @Omittable()
  @IsDateFilter()
  from?: string;

  /** Last day, inclusive (`YYYY-MM-DD` or a timestamp; UTC). Default: today. */
  @Omittable()
  @IsDateFilter()
  to?: string;
}

const ipProblems = (value: unknown): string[] =>
  Array.isArray(value)
    ? value.flatMap((v) => (typeof v === 'string' ? (allowedIpProblem(v) ?? []) : []))
    : [];

/** Every entry is an address or a CIDR within the prefix bounds (the message names each bad one). */
export const AreAllowedIps = () =>
  ValidateBy({
    name: 'areAllowedIps',
    validator: {
      validate: (value) => ipProblems(value).length === 0,
      defaultMessage: (args) => ipProblems(args?.value).slice(0, 5).join('; '),
    },
  });

export class AllowedIpsDto {
  /** IPv4/IPv6 addresses or CIDRs (at most 50; duplicates are merged). An empty list clears it. */
  @IsArray()
  @ArrayMaxSize(MAX_ALLOWED_IPS)
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  @AreAllowedIps()
  ips: string[];
}

export class InviteMemberDto {
  @NormalizeEmail()
  @IsEmail()
  @MaxLength(254)
  email: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  fullName: string;
}

/** Members, oldest first. */
export class ListMembersQueryDto extends PageQueryDto {}
