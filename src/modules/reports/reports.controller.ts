import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { RawResponse, ResponseMessage } from '../../common/http/response-message.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { CallerCompany, UserAuth } from '../auth/access.decorators';
import type { Company } from '../companies/entities/company.entity';
import { LogIdPipe } from './log-id.pipe';
import {
  LogFilterQueryDto,
  LogsQueryDto,
  ReportWindowQueryDto,
  SummaryQueryDto,
} from './dto/report-requests.dto';
import {
  BouncesReportDto,
  CleanLogDto,
  DomainsReportDto,
  LogsPageDto,
  ReportSummaryDto,
} from './dto/report-responses.dto';
import { ReportsService } from './reports.service';

/** Delivery reports of the caller's company. */
@ApiTags('reports')
@Controller('api/v1/reports')
export class ReportsController {
  constructor(private readonly reports: ReportsService) {}

  /**
   * Delivery summary of the company over a window.
   *
   * @remarks
   * Any active user of the company. Records whose last event falls between `from` and `to` (at most 366
   * days): `processed` counts them all, each status count those whose current status it is, `opened` and
   * `clicked` their flags; rates are fractions of `processed` (delivery = sent + delivered + complained).
   * `series` has every day, week (from Monday) or month of the window. 400 for a bad or too long window.
   */
  @Get('summary')
  @UserAuth({ key: 'read' })
  @ResponseMessage('Delivery summary fetched')
  @ApiEnvelope(ReportSummaryDto)
  @ApiErrors(400)
  summary(@CallerCompany() company: Company, @Query() query: SummaryQueryDto): Promise<ReportSummaryDto> {
    return this.reports.summary(company.id, query);
  }

  /**
   * The company's clean log, newest first.
   *
   * @remarks
   * Any active user of the company. One record per message and recipient whose last event falls between
   * `from` and `to`, filtered by status, recipient, sender, message id, queue id or a free-text `search`.
   * Pages of `limit` (1..100); pass `meta.nextCursor` as `cursor` for the next one. A cursor that was
   * altered is a 400.
   */
  @Get('logs')
  @UserAuth({ key: 'read' })
  @ResponseMessage('Delivery logs fetched')
  @ApiEnvelope(LogsPageDto)
  @ApiErrors(400)
  logs(@CallerCompany() company: Company, @Query() query: LogsQueryDto): Promise<LogsPageDto> {
    return this.reports.logs(company.id, query);
  }

  /**
   * Export the company's clean log as CSV.
   *
   * @remarks
   * Any active user of the company. The same filters as the log; a `text/csv` attachment streamed as it is
   * read (at most 1,000,000 rows, newest first) with a header row. Cells that a spreadsheet would run as a
   * formula are defused with a leading quote.
   */
  @Get('logs/export')
  @UserAuth({ key: 'read' })
  @RawResponse()
  @ApiOkResponse({
    description: 'The clean log as CSV, with a header row, as an attachment',
    content: { 'text/csv': { schema: { type: 'string' } } },
  })
  @ApiErrors(400)
  export(
    @CallerCompany() company: Company,
    @Query() query: LogFilterQueryDto,
    @Res() reply: FastifyReply,
  ): FastifyReply {
    const csv = this.reports.export(company.id, query);
    return reply
      .status(200)
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', 'attachment; filename="delivery-logs.csv"')
      .header('cache-control', 'private, no-store')
      .send(csv);
  }

  /**
   * One clean record with its events.
   *
   * @remarks
   * Any active user of the company. The record and the ordered list of its raw outcomes (Postfix attempts and
   * provider events). 404 for a record of another company or none; 400 for an id that is not 64 hex digits.
   */
  @Get('logs/:id')
  @UserAuth({ key: 'read' })
  @ResponseMessage('Delivery log fetched')
  @ApiEnvelope(CleanLogDto)
  @ApiErrors(400, 404)
  log(@CallerCompany() company: Company, @Param('id', LogIdPipe) id: string): Promise<CleanLogDto> {
    return this.reports.log(company.id, id);
  }

  /**
   * Delivery figures per sender domain.
   *
   * @remarks
   * Any active user of the company. For each sender domain with records in the window: the counts and
   * rates of the summary, most records first. 400 for a bad or too long window.
   */
  @Get('domains')
  @UserAuth({ key: 'read' })
  @ResponseMessage('Domain report fetched')
  @ApiEnvelope(DomainsReportDto)
  @ApiErrors(400)
  domains(
    @CallerCompany() company: Company,
    @Query() query: ReportWindowQueryDto,
  ): Promise<DomainsReportDto> {
    return this.reports.domains(company.id, query);
  }

  /**
   * Top bounce reasons and bounced recipient domains.
   *
   * @remarks
   * Any active user of the company. Bounced records of the window grouped by DSN (with one remote reply as
   * an example) and by recipient domain, the 20 largest of each. 400 for a bad or too long window.
   */
  @Get('bounces')
  @UserAuth({ key: 'read' })
  @ResponseMessage('Bounce report fetched')
  @ApiEnvelope(BouncesReportDto)
  @ApiErrors(400)
  bounces(
    @CallerCompany() company: Company,
    @Query() query: ReportWindowQueryDto,
  ): Promise<BouncesReportDto> {
    return this.reports.bounces(company.id, query);
  }
}
