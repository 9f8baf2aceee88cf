import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { uuidPipe } from '../../common/validation/uuid-param.pipe';
import type { Admin } from '../admins/entities/admin.entity';
import { AdminRoles, CurrentAdmin } from '../auth/access.decorators';
import { CrmConnectionService } from './crm-connection.service';
import { CrmSyncService } from './crm-sync.service';
import { CrmAccountDto, CrmAuthorizationDto } from './dto/crm.dto';

/**
 * The CRM's admin routes: start connecting it (OAuth 2.0 authorisation code; the redirect is
 * crm.controller.ts) and sync a company into it now.
 */
@ApiTags('crm')
@Controller('api/v1')
export class CrmAdminController {
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
