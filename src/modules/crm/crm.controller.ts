import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { uuidPipe } from '../../common/validation/uuid-param.pipe';
import type { Admin } from '../admins/entities/admin.entity';
import { AdminRoles, CurrentAdmin, Public } from '../auth/access.decorators';
import { CrmConnectionService } from './crm-connection.service';
import { CrmSyncService } from './crm-sync.service';
import { CrmAccountDto, CrmAuthorizationDto, CrmConnectedDto, CrmRedirectQueryDto } from './dto/crm.dto';

/** Connecting the CRM (OAuth 2.0 authorisation code) and syncing companies into it. */
@ApiTags('crm')
@Controller('api/v1')
export class CrmController {
  constructor(
    private readonly connection: CrmConnectionService,
    private readonly sync: CrmSyncService,
  ) {}

  /**
   * Start connecting the CRM.
   *
   * @remarks
   * superAdmin only. Answers the CRM's authorisation URL, with a signed `state` that names the admin, lasts
   * 10 minutes and works once. 503 "CRM is not configured" while CRM_CLIENT_ID or CRM_CLIENT_SECRET is unset.
   */
  @Get('auth-crm')
  @AdminRoles('superAdmin')
  @ResponseMessage('Open the authorization URL to connect the CRM')
  @ApiEnvelope(CrmAuthorizationDto)
  @ApiErrors(503)
  authorize(@CurrentAdmin() admin: Admin): Promise<CrmAuthorizationDto> {
    return this.connection.authorizationUrl(admin.uuid);
  }

  /**
   * The CRM's OAuth redirect.
   *
   * @remarks
   * Public: the signed `state` is the credential. Exchanges `code` for tokens and stores them encrypted. 400 for
   * a state that is forged, expired or already used, for `?error=` (the admin declined) and for a code the CRM
   * refuses; 502 when the CRM answers a token the service cannot use (nothing is stored then); 503 when the CRM
   * is not configured or does not answer.
   */
  @Get('get-token')
  @Public()
  @ResponseMessage('CRM connected')
  @ApiEnvelope(CrmConnectedDto)
  @ApiErrors(400, 502, 503)
  connect(@Query() query: CrmRedirectQueryDto): Promise<CrmConnectedDto> {
    return this.connection.connect(query);
  }

  /**
   * Sync a company into the CRM now.
   *
   * @remarks
   * superAdmin and admin. Upserts the company as an Account and its owner as a Contact, and answers the Account
   * id. 404 when no company has this uuid; 503 when the CRM is not configured, not connected, or fails (the
   * company stays queued and is retried by the `crm-sync` job); 502 when a token refresh answers a token the
   * service cannot use (the stored connection is kept as it was).
   */
  @Post('admins/companies/:uuid/crm-sync')
  @AdminRoles('superAdmin', 'admin')
  @HttpCode(200)
  @ResponseMessage('Company synced to the CRM')
  @ApiEnvelope(CrmAccountDto)
  @ApiErrors(400, 404, 409, 502, 503)
  syncCompany(@Param('uuid', uuidPipe) uuid: string): Promise<CrmAccountDto> {
    return this.sync.syncCompany(uuid);
  }
}
