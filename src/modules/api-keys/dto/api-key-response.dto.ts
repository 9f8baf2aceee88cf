import { ApiProperty } from '@nestjs/swagger';
import { PageResponseDto } from '../../../common/pagination/page';
import { API_KEY_SCOPES, ApiKey, type ApiKeyScope } from '../entities/api-key.entity';

/** A key as it is shown (never its secret or digest: `hint` is all that is shown again). */
export class ApiKeyDto {
  uuid: string;
  companyUuid: string;
  name: string;
  @ApiProperty({ enum: API_KEY_SCOPES }) scope: ApiKeyScope;
  /** Domains the key may send from; empty: every verified domain of the company. */
  domains: string[];
  /** Networks the key may be used from; empty: any. */
  allowedIps: string[];
  /** The key's first 12 characters (`rk_` and 9 more). */
  @ApiProperty({ example: 'rk_AbCdEfGhI' }) hint: string;
  expiresAt: Date | null;
  /** Updated at most once a minute. */
  lastUsedAt: Date | null;
  lastUsedIp: string | null;
  createdByUserUuid: string | null;
  createdAt: Date;
  revokedAt: Date | null;

  static from(key: ApiKey, companyUuid: string): ApiKeyDto {
    return {
      uuid: key.uuid,
      companyUuid,
      name: key.name,
      scope: key.scope,
      domains: key.domains,
      allowedIps: key.allowedIps,
      hint: key.hint,
      expiresAt: key.expiresAt,
      lastUsedAt: key.lastUsedAt,
      lastUsedIp: key.lastUsedIp,
      createdByUserUuid: key.createdByUserUuid,
      createdAt: key.createdAt,
      revokedAt: key.revokedAt,
    };
  }
}

export class ApiKeyPageDto extends PageResponseDto {
  @ApiProperty({ type: [ApiKeyDto] }) items: ApiKeyDto[];
}

/** The answer that makes a key: the only time its secret is shown. */
export class CreatedApiKeyDto {
  apiKey: ApiKeyDto;
  /** The secret: `Authorization: Bearer <key>`. Shown this once; keep it safe. */
  @ApiProperty({ example: 'rk_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde' }) key: string;
}
