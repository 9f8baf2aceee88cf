import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { CurrentUser, OwnerAuth } from '../auth/access.decorators';
import { OwnedEntity, OwnedResource } from '../auth/guards/company-ownership.guard';
import type { User } from '../users/entities/user.entity';
import { API_KEY_NOT_FOUND, ApiKeysService } from './api-keys.service';
import { CreateApiKeyDto, ListApiKeysQueryDto, UpdateApiKeyDto } from './dto/api-key-requests.dto';
import { ApiKeyDto, ApiKeyPageDto, CreatedApiKeyDto } from './dto/api-key-response.dto';
import { ApiKey } from './entities/api-key.entity';

/** The company's API keys, for its owner (platform.md "API keys"); never opened to a key. */
@ApiTags('api keys')
@Controller('api/v1/api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  /**
   * Make an API key.
   *
   * @remarks
   * Owner only. Answers the key's `key` (`rk_` and 43 characters) this once: only its SHA-256 digest is
   * kept, and only its first 12 characters (`hint`) are ever shown again. `scope` is `read`, `sending` or
   * `full`; `domains` must be the company's domains (400 otherwise); `allowedIps` follow the rules of a
   * company's allowed networks; `expiresAt` is in the future, at most 2 years ahead. 409 when the company
   * has 50 keys in use.
   */
  @Post()
  @OwnerAuth()
  @ResponseMessage('API key created: keep the key, it is not shown again')
  @ApiEnvelope(CreatedApiKeyDto, 201)
  @ApiErrors(400, 409)
  create(@CurrentUser() user: User, @Body() dto: CreateApiKeyDto): Promise<CreatedApiKeyDto> {
    return this.apiKeys.create(user.company, user.uuid, dto);
  }

  /**
   * List the company's API keys.
   *
   * @remarks
   * Owner only. The keys in use, newest first; `revoked=true` lists the revoked ones. Never a secret.
   */
  @Get()
  @OwnerAuth()
  @ResponseMessage('API keys fetched')
  @ApiEnvelope(ApiKeyPageDto)
  @ApiErrors(400)
  list(@CurrentUser() user: User, @Query() query: ListApiKeysQueryDto): Promise<Page<ApiKeyDto>> {
    return this.apiKeys.list(user.company, query);
  }

  /**
   * Read an API key.
   *
   * @remarks
   * Owner only. With `lastUsedAt` and `lastUsedIp` (written at most once a minute).
   */
  @Get(':uuid')
  @OwnerAuth()
  @OwnedResource(ApiKey, API_KEY_NOT_FOUND)
  @ResponseMessage('API key fetched')
  @ApiEnvelope(ApiKeyDto)
  view(@CurrentUser() user: User, @OwnedEntity() key: ApiKey): Promise<ApiKeyDto> {
    return this.apiKeys.view(key, user.company.uuid);
  }

  /**
   * Rename an API key or change where it may be used from.
   *
   * @remarks
   * Owner only. `name`, `domains` and `allowedIps` may change (a list given replaces the old one); scope
   * and expiry cannot (make a new key). Takes effect in every replica at once. 409 for a revoked key.
   */
  @Patch(':uuid')
  @OwnerAuth()
  @OwnedResource(ApiKey, API_KEY_NOT_FOUND)
  @ResponseMessage('API key updated')
  @ApiEnvelope(ApiKeyDto)
  @ApiErrors(409)
  update(
    @CurrentUser() user: User,
    @OwnedEntity() key: ApiKey,
    @Body() dto: UpdateApiKeyDto,
  ): Promise<ApiKeyDto> {
    return this.apiKeys.update(key, user.company.uuid, dto);
  }

  /**
   * Revoke an API key.
   *
   * @remarks
   * Owner only. The very next request with the key answers 401 "API key revoked", in every replica. Revoking
   * a revoked key changes nothing.
   */
  @Delete(':uuid')
  @OwnerAuth()
  @OwnedResource(ApiKey, API_KEY_NOT_FOUND)
  @ResponseMessage('API key revoked')
  @ApiEnvelope()
  async revoke(@OwnedEntity() key: ApiKey): Promise<object> {
    await this.apiKeys.revoke(key);
    return {};
  }
}
