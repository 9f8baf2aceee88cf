import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import type { Admin } from '../admins/entities/admin.entity';
import { AdminRoles, CurrentAdmin } from '../auth/access.decorators';
import { CompaniesAdminService } from './companies-admin.service';
import { AdminUpdateCompanyDto, ListCompaniesQueryDto } from './dto/admin-company-requests.dto';
import { AdminCompanyDetailDto, CompanyPageDto, ScriptUrlDto } from './dto/admin-company-response.dto';
import { CompanyDto, RelayCredentialsDto } from './dto/company-response.dto';
import { uuidPipe } from '../../common/validation/uuid-param.pipe';

/** auth.md: companies read by every admin role, written by superAdmin and admin. */
@ApiTags('admin companies')
@Controller('api/v1/admins/companies')
export class CompaniesAdminController {
  constructor(private readonly companies: CompaniesAdminService) {}

  /**
   * List customer companies.
   *
   * @remarks
   * Every admin role. Paged, each with a subscription summary; filtered by `status`, `relayStatus`,
   * `packageUuid` and `search` (company name, relay username, a user's e-mail address).
   */
  @Get()
  @AdminRoles('superAdmin', 'admin', 'accounting')
  @ResponseMessage('Companies fetched')
  @ApiEnvelope(CompanyPageDto)
  @ApiErrors(400)
  list(@Query() query: ListCompaniesQueryDto): Promise<Page<CompanyDto>> {
    return this.companies.list(query);
  }

  /**
   * Read one company with its members.
   *
   * @remarks
   * Every admin role. The company as its users see it, with its members (`users`), `domainsCount` and
   * `lastBilling` (or null). 404 when no company has this uuid.
   */
  @Get(':uuid')
  @AdminRoles('superAdmin', 'admin', 'accounting')
  @ResponseMessage('Company fetched')
  @ApiEnvelope(AdminCompanyDetailDto)
  @ApiErrors(400, 404)
  get(@Param('uuid', uuidPipe) uuid: string): Promise<AdminCompanyDetailDto> {
    return this.companies.get(uuid);
  }

  /**
   * Change a company's status, package, quota or period.
   *
   * @remarks
   * superAdmin and admin. Applies the fields given in one transaction, each change recorded in the company's
   * audit events with the admin: `status` (with `suspendedReason`), `packageUuid` (assigned without payment:
   * a new period from now, or the running period of the same package extended), `quota` (an override for the
   * current period) and `periodEnd` (extension only). Suspending notifies the company's users, by e-mail too,
   * and the admins.
   *
   * 409 when extending the period of a company that has no package; 400 for an archived package, a
   * `periodEnd` that is not later than the current end, or a `suspendedReason` without suspension; 404 for an
   * unknown company or package.
   */
  @Patch(':uuid')
  @AdminRoles('superAdmin', 'admin')
  @ResponseMessage('Company updated')
  @ApiEnvelope(AdminCompanyDetailDto)
  @ApiErrors(400, 404, 409)
  update(
    @CurrentAdmin() admin: Admin,
    @Param('uuid', uuidPipe) uuid: string,
    @Body() dto: AdminUpdateCompanyDto,
  ): Promise<AdminCompanyDetailDto> {
    return this.companies.update(admin, uuid, dto);
  }

  /**
   * Rotate a company's setup-script token.
   *
   * @remarks
   * superAdmin and admin. Returns the new script URL; the old URL stops working at once. 404 when no company
   * has this uuid.
   */
  @Post(':uuid/script-token')
  @AdminRoles('superAdmin', 'admin')
  @HttpCode(200)
  @ResponseMessage('Script token rotated')
  @ApiEnvelope(ScriptUrlDto)
  @ApiErrors(400, 404)
  scriptToken(@CurrentAdmin() admin: Admin, @Param('uuid', uuidPipe) uuid: string): Promise<ScriptUrlDto> {
    return this.companies.rotateScriptToken(admin, uuid);
  }

  /**
   * Generate a new SMTP relay password for a company.
   *
   * @remarks
   * superAdmin and admin. Returns the relay username and a new password, shown only this once; the old
   * password stops working at once. Recorded in the company's audit events. 404 when no company has this
   * uuid.
   */
  @Post(':uuid/relay-password')
  @AdminRoles('superAdmin', 'admin')
  @HttpCode(200)
  @ResponseMessage('Relay password generated; it is shown only this once')
  @ApiEnvelope(RelayCredentialsDto)
  @ApiErrors(400, 404)
  relayPassword(
    @CurrentAdmin() admin: Admin,
    @Param('uuid', uuidPipe) uuid: string,
  ): Promise<RelayCredentialsDto> {
    return this.companies.resetRelayPassword(admin, uuid);
  }
}
