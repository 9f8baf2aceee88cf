import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { AdminRoles } from '../auth/access.decorators';
import { BillingReportsService } from './billing-reports.service';
import { RevenueSummaryQueryDto } from './dto/billing-requests.dto';
import { RevenueSummaryDto } from './dto/billing-response.dto';

/** The revenue row of /admins/reports: the same figures as /admins/billings/summary. */
@ApiTags('admin reports')
@Controller('api/v1/admins/reports')
export class RevenueReportAdminController {
  constructor(private readonly reports: BillingReportsService) {}

  /**
   * Revenue report over a period.
   *
   * @remarks
   * superAdmin and accounting. Revenue per period and currency, and billing counts per status, between `from`
   * and `to`: the same figures as GET /api/v1/admins/billings/summary. 400 for a missing or too long window.
   */
  @Get('revenue')
  @AdminRoles('superAdmin', 'accounting')
  @ResponseMessage('Revenue report fetched')
  @ApiEnvelope(RevenueSummaryDto)
  @ApiErrors(400)
  revenue(@Query() query: RevenueSummaryQueryDto): Promise<RevenueSummaryDto> {
    return this.reports.summary(query);
  }
}
