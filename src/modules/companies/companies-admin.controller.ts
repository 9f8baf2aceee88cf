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

  @Get()
  @AdminRoles('superAdmin', 'admin', 'accounting')
  @ResponseMessage('Companies fetched')
  @ApiEnvelope(CompanyPageDto)
  @ApiErrors(400)
  list(@Query() query: ListCompaniesQueryDto): Promise<Page<CompanyDto>> {
    return this.companies.list(query);
  }

  @Get(':uuid')
  @AdminRoles('superAdmin', 'admin', 'accounting')
  @ResponseMessage('Company fetched')
  @ApiEnvelope(AdminCompanyDetailDto)
  @ApiErrors(400, 404)
  get(@Param('uuid', uuidPipe) uuid: string): Promise<AdminCompanyDetailDto> {
    return this.companies.get(uuid);
  }

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

  @Post(':uuid/script-token')
  @AdminRoles('superAdmin', 'admin')
  @HttpCode(200)
  @ResponseMessage('Script token rotated')
  @ApiEnvelope(ScriptUrlDto)
  @ApiErrors(400, 404)
  scriptToken(@CurrentAdmin() admin: Admin, @Param('uuid', uuidPipe) uuid: string): Promise<ScriptUrlDto> {
    return this.companies.rotateScriptToken(admin, uuid);
  }

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
