import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { CallerCompany, UserAuth } from '../auth/access.decorators';
import type { Company } from '../companies/entities/company.entity';
import { DeliverabilityReportsService } from './deliverability-reports.service';
import {
  AlertsQueryDto,
  BounceCategoriesQueryDto,
  ProvidersQueryDto,
} from './dto/deliverability-requests.dto';
import {
  AlertsReportDto,
  BounceCategoriesReportDto,
  ProvidersReportDto,
} from './dto/deliverability-responses.dto';

/** Deliverability of the caller's company (deliverability.md "Reports"). */
@ApiTags('reports')
@Controller('api/v1/reports')
export class DeliverabilityController {
  constructor(private readonly reports: DeliverabilityReportsService) {}

  /**
   * The company's mail per mailbox provider.
   *
   * @remarks
   * Any active user of the company; keys with `read`. Records whose last event falls between `from` and `to`
   * (whole hours; at most 366 days), of one sender `domain` when given, for each of `gmail`, `microsoft`,
   * `yahoo`, `apple` and `other` (by the recipient's domain, else the next hop): `sent` (handed over:
   * sent, delivered, complained), `delivered`, `deferred`, `bounced` by type (`hard`: the recipient is
   * the problem; `soft`: temporary, given up; `block`: the sender is the problem), `complained`;
   * `bounceRate` = bounced / (sent + deferred + bounced), `complaintRate` = complained / sent; the
   * failures' five most frequent bounce categories. Refusals of the relay itself are not counted.
   */
  @Get('providers')
  @UserAuth({ key: 'read' })
  @ResponseMessage('Provider report fetched')
  @ApiEnvelope(ProvidersReportDto)
  @ApiErrors(400)
  providers(
    @CallerCompany() company: Company,
    @Query() query: ProvidersQueryDto,
  ): Promise<ProvidersReportDto> {
    return this.reports.providers(company.id, query);
  }

  /**
   * The company's failures by bounce category.
   *
   * @remarks
   * Any active user of the company; keys with `read`. Deferred, bounced and expired records of the window
   * (of one sender `domain` and one `provider` when given) by category and type, most first, each with a
   * sample: the category's most frequent rule and the latest reply it matched.
   */
  @Get('bounce-categories')
  @UserAuth({ key: 'read' })
  @ResponseMessage('Bounce categories fetched')
  @ApiEnvelope(BounceCategoriesReportDto)
  @ApiErrors(400)
  bounceCategories(
    @CallerCompany() company: Company,
    @Query() query: BounceCategoriesQueryDto,
  ): Promise<BounceCategoriesReportDto> {
    return this.reports.bounceCategories(company.id, query);
  }

  /**
   * The company's deliverability alerts, newest first.
   *
   * @remarks
   * Any active user of the company; keys with `read`. Judged hourly per mailbox provider over the last 7
   * days (`complaint-rate`: warning ≥ 0.1 %, critical ≥ 0.3 %; `hard-bounce-rate`: 2 % / 5 %; `blocked`,
   * reputation or authentication blocks of the last 24 hours: 1 % / 5 %), once at least 100 messages went
   * to the provider; resolved after 24 hours below the warning threshold. `state` = `open` or `resolved`.
   */
  @Get('alerts')
  @UserAuth({ key: 'read' })
  @ResponseMessage('Alerts fetched')
  @ApiEnvelope(AlertsReportDto)
  @ApiErrors(400)
  alerts(@CallerCompany() company: Company, @Query() query: AlertsQueryDto): Promise<AlertsReportDto> {
    return this.reports.alertList(company.id, query.state);
  }
}
