import { Controller, Delete, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { uuidPipe } from '../../common/validation/uuid-param.pipe';
import { AdminRoles } from '../auth/access.decorators';
import { ApiKeysService } from './api-keys.service';
import { ListApiKeysQueryDto } from './dto/api-key-requests.dto';
import { ApiKeyDto, ApiKeyPageDto } from './dto/api-key-response.dto';

/** A company's API keys, for admins (platform.md "API keys"). */
@ApiTags('admin api keys')
@Controller('api/v1/admins/companies/:uuid/api-keys')
export class ApiKeysAdminController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  /**
   * List a company's API keys.
   *
   * @remarks
   * Every admin role. The keys in use, newest first; `revoked=true` lists the revoked ones. Never a secret.
   * 404 for an unknown company.
   */
  @Get()
  @AdminRoles('superAdmin', 'admin', 'accounting')
  @ResponseMessage('API keys fetched')
  @ApiEnvelope(ApiKeyPageDto)
  @ApiErrors(400, 404)
  list(@Param('uuid', uuidPipe) uuid: string, @Query() query: ListApiKeysQueryDto): Promise<Page<ApiKeyDto>> {
    return this.apiKeys.listOfCompany(uuid, query);
  }

  /**
   * Revoke a company's API key.
   *
   * @remarks
   * superAdmin and admin. The very next request with the key answers 401, in every replica. 404 for an
   * unknown company, or a key that is not that company's.
   */
  @Delete(':keyUuid')
  @AdminRoles('superAdmin', 'admin')
  @ResponseMessage('API key revoked')
  @ApiEnvelope()
  @ApiErrors(400, 404)
  async revoke(
    @Param('uuid', uuidPipe) uuid: string,
    @Param('keyUuid', uuidPipe) keyUuid: string,
  ): Promise<object> {
    await this.apiKeys.revokeOfCompany(uuid, keyUuid);
    return {};
  }
}
