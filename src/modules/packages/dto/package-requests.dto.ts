import { ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsISO4217CurrencyCode,
  IsNotEmpty,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto';
import { QueryBoolean } from '../../../common/validation/query-transforms';
import { Omittable, Nullable } from '../../../common/validation/presence';

/** The largest value of the `quota` integer column. */
export const MAX_QUOTA = 2_147_483_647;
export const MAX_DURATION_DAYS = 3660;
export const DEFAULT_DURATION_DAYS = 30;

export class CreatePackageDto {
  /** Unique (case-insensitively) among packages. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  name: string;

  @Nullable()
  @IsString()
  @MaxLength(1000)
  description?: string | null;

  /** Messages per period, > 0. */
  @IsInt()
  @Min(1)
  @Max(MAX_QUOTA)
  quota: number;

  /** Integer, in the currency's minor unit (IDR has none: 150000 is Rp 150.000). */
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  price: number;

  /** ISO 4217, upper case (e.g. IDR, USD). */
  @Matches(/^[A-Z]{3}$/, { message: 'currency must be 3 upper-case letters (ISO 4217)' })
  @IsISO4217CurrencyCode()
  currency: string;

  /** Length of a period in days, 1..3660 (default 30). */
  @ApiPropertyOptional({ default: DEFAULT_DURATION_DAYS, minimum: 1, maximum: MAX_DURATION_DAYS })
  @Omittable()
  @IsInt()
  @Min(1)
  @Max(MAX_DURATION_DAYS)
  durationDays?: number;

  /** Offered to customers (default true). */
  @Omittable()
  @IsBoolean()
  isPublic?: boolean;

  /** Can be bought (default true). */
  @Omittable()
  @IsBoolean()
  isActive?: boolean;
}

/** Every field optional; `description: null` clears the description. Price changes apply to new billings only. */
export class UpdatePackageDto {
  @Omittable()
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  name?: string;

  @Nullable()
  @IsString()
  @MaxLength(1000)
  description?: string | null;

  @Omittable()
  @IsInt()
  @Min(1)
  @Max(MAX_QUOTA)
  quota?: number;

  @Omittable()
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  price?: number;

  @Omittable()
  @Matches(/^[A-Z]{3}$/, { message: 'currency must be 3 upper-case letters (ISO 4217)' })
  @IsISO4217CurrencyCode()
  currency?: string;

  @Omittable()
  @IsInt()
  @Min(1)
  @Max(MAX_DURATION_DAYS)
  durationDays?: number;

  @Omittable()
  @IsBoolean()
  isPublic?: boolean;

  @Omittable()
  @IsBoolean()
  isActive?: boolean;
}

/** Entity property paths, for a whitelisted `sort`. */
export const PACKAGE_SORT_FIELDS = {
  createdAt: 'package.createdAt',
  name: 'package.name',
  price: 'package.price',
  quota: 'package.quota',
} as const;

export class ListPackagesQueryDto extends PageQueryDto {
  @Omittable()
  @QueryBoolean()
  @IsBoolean()
  isActive?: boolean;

  @Omittable()
  @QueryBoolean()
  @IsBoolean()
  isPublic?: boolean;

  /** Matches the name. */
  @Omittable()
  @IsString()
  @MaxLength(100)
  search?: string;

  /** `field:asc|desc`; fields: createdAt, name, price, quota. Default `createdAt:desc`. */
  @ApiPropertyOptional({ enum: Object.keys(PACKAGE_SORT_FIELDS).flatMap((f) => [`${f}:asc`, `${f}:desc`]) })
  @Omittable()
  @IsString()
  @IsIn(Object.keys(PACKAGE_SORT_FIELDS).flatMap((f) => [`${f}:asc`, `${f}:desc`]))
  sort?: string;
}
