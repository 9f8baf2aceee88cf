import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { AdminRoles } from '../auth/access.decorators';
import { AdminLogsQueryDto, AdminSummaryQueryDto, CompaniesReportQueryDto } from './dto/report-requests.dto';
import { CompaniesReportDto, LogsPageDto, ReportSummaryDto } from './dto/report-responses.dto';
import { ReportsService } from './reports.service';

/** Delivery reports across companies, for admins (the revenue row lives with billings). */
@ApiTags('admin reports')
@Controller('api/v1/admins/reports')
export class ReportsAdminController {
  constructor(private readonly reports: ReportsService) {}

  /**
   * Delivery summary of the platform or of one company.
   *
   * @remarks
   * Every admin role. As the user summary, over every company's records, or one company's with
   * `companyUuid` (404 when there is no such company). 400 for a bad or too long window.
   */
  @Get('summary')
  @AdminRoles()
  @ResponseMessage('Delivery summary fetched')
  @ApiEnvelope(ReportSummaryDto)
  @ApiErrors(400, 404)
  async summary(@Query() query: AdminSummaryQueryDto): Promise<ReportSummaryDto> {
    return this.reports.summary(await this.reports.adminScope(query), query);
  }

  /**
   * The clean log across companies, newest first.
   *
   * @remarks
   * Every admin role. As the user log, over every company's records (and those of no known company), or one
   * company's with `companyUuid` (404 when there is no such company). A cursor that was altered is a 400.
   */
  @Get('logs')
  @AdminRoles()
  @ResponseMessage('Delivery logs fetched')
  @ApiEnvelope(LogsPageDto)
  @ApiErrors(400, 404)
  async logs(@Query() query: AdminLogsQueryDto): Promise<LogsPageDto> {
    return this.reports.logs(await this.reports.adminScope(query), query);
  }

  /**
   * Companies ranked by their delivery figures.
   *
   * @remarks
   * Every admin role. For each company with records in the window: counts, rates and quota use, sorted by
   * `processed`, `bounceRate` or `complaintRate` (descending). 400 for a bad or too long window.
   */
  @Get('companies')
  @AdminRoles()
  @ResponseMessage('Company report fetched')
  @ApiEnvelope(CompaniesReportDto)
  @ApiErrors(400)
  companies(@Query() query: CompaniesReportQueryDto): Promise<CompaniesReportDto> {
    return this.reports.companiesReport(query);
  }
}
