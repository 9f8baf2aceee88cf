import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { AdminRoles } from '../auth/access.decorators';
import { DeliverabilityReportsService } from './deliverability-reports.service';
import {
  AdminAlertsQueryDto,
  AdminBounceCategoriesQueryDto,
  AdminProvidersQueryDto,
} from './dto/deliverability-requests.dto';
import {
  AlertsReportDto,
  BounceCategoriesReportDto,
  ProvidersReportDto,
} from './dto/deliverability-responses.dto';

/** Deliverability across companies, for admins (deliverability.md "Reports"). */
@ApiTags('admin reports')
@Controller('api/v1/admins/reports')
export class DeliverabilityAdminController {
  constructor(private readonly reports: DeliverabilityReportsService) {}

  /**
   * Mail per mailbox provider, of the platform or of one company.
   *
   * @remarks
   * Every admin role. As the user report, over every company's records (and those of no known company), or
   * one company's with `companyUuid` (404 when there is no such company). 400 for a bad or too long window.
   */
  @Get('providers')
  @AdminRoles()
  @ResponseMessage('Provider report fetched')
  @ApiEnvelope(ProvidersReportDto)
  @ApiErrors(400, 404)
  async providers(@Query() query: AdminProvidersQueryDto): Promise<ProvidersReportDto> {
    return this.reports.providers(await this.reports.adminScope(query.companyUuid), query);
  }

  /**
   * Failures by bounce category, of the platform or of one company.
   *
   * @remarks
   * Every admin role. As the user report over every company (the sample: the latest reply of the most
   * frequent rule, from any company), or one company's with `companyUuid` (404 when there is none).
   */
  @Get('bounce-categories')
  @AdminRoles()
  @ResponseMessage('Bounce categories fetched')
  @ApiEnvelope(BounceCategoriesReportDto)
  @ApiErrors(400, 404)
  async bounceCategories(@Query() query: AdminBounceCategoriesQueryDto): Promise<BounceCategoriesReportDto> {
    return this.reports.bounceCategories(await this.reports.adminScope(query.companyUuid), query);
  }

  /**
   * Deliverability alerts of every company, or of one, newest first.
   *
   * @remarks
   * Every admin role. `state` = `open` or `resolved`; `companyUuid` for one company (404 when there is none).
   */
  @Get('alerts')
  @AdminRoles()
  @ResponseMessage('Alerts fetched')
  @ApiEnvelope(AlertsReportDto)
  @ApiErrors(400, 404)
  async alerts(@Query() query: AdminAlertsQueryDto): Promise<AlertsReportDto> {
    return this.reports.alertList(await this.reports.adminScope(query.companyUuid), query.state);
  }
}
