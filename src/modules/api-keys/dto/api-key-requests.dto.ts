import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsISO8601,
  IsNotEmpty,
  IsString,
  MaxLength,
} from 'class-validator';
import { Transform } from 'class-transformer';
import { PageQueryDto } from '../../../common/pagination/page-query.dto';
import { Omittable } from '../../../common/validation/presence';
import { QueryBoolean } from '../../../common/validation/query-transforms';
import { MAX_ALLOWED_IPS } from '../../companies/allowed-ips';
import { AreAllowedIps } from '../../companies/dto/company-requests.dto';
import { API_KEY_SCOPES, type ApiKeyScope } from '../entities/api-key.entity';

/** At most this many domains in a key's `domains` (a company has at most MAX_DOMAINS_PER_COMPANY). */
export const MAX_KEY_DOMAINS = 100;

const Trim = () =>
  Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value));

/** `POST /api/v1/api-keys`. */
export class CreateApiKeyDto {
  /** What the key is for, 1 to 100 characters (e.g. "billing system"). */
  @Trim()
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  name: string;

  /** `read`: the GET routes; `sending`: sending mail by HTTP; `full`: both, and the writes on domains, suppression and webhooks. */
  @IsIn(API_KEY_SCOPES)
  scope: ApiKeyScope;

  /** Names of the company's domains the key may send from; empty or absent: every verified domain. */
  @Omittable()
  @IsArray()
  @ArrayMaxSize(MAX_KEY_DOMAINS)
  @IsString({ each: true })
  @MaxLength(253, { each: true })
  domains?: string[];

  /** Addresses or CIDRs the key may be used from (at most 50, as a company's allowed IPs); empty or absent: any. */
  @Omittable()
  @IsArray()
  @ArrayMaxSize(MAX_ALLOWED_IPS)
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  @AreAllowedIps()
  allowedIps?: string[];

  /** When the key stops working (ISO 8601, in the future, at most 2 years ahead); absent: never. */
  @Omittable()
  @IsISO8601({ strict: true })
  expiresAt?: string;
}

/** `PATCH /api/v1/api-keys/:uuid`: scope and expiry cannot change (make a new key). */
export class UpdateApiKeyDto {
  @Omittable()
  @Trim()
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  name?: string;

  /** Replaces the list; empty: every verified domain. */
  @Omittable()
  @IsArray()
  @ArrayMaxSize(MAX_KEY_DOMAINS)
  @IsString({ each: true })
  @MaxLength(253, { each: true })
  domains?: string[];

  /** Replaces the list; empty: any address. */
  @Omittable()
  @IsArray()
  @ArrayMaxSize(MAX_ALLOWED_IPS)
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  @AreAllowedIps()
  allowedIps?: string[];
}

/** Keys in use, newest first; `revoked=true` lists the revoked ones instead. */
export class ListApiKeysQueryDto extends PageQueryDto {
  @Omittable()
  @QueryBoolean()
  @IsBoolean()
  revoked?: boolean;
}
