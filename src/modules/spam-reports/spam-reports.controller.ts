import { Body, Controller, HttpStatus, Post, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { UseCredential } from '../auth/access.decorators';
import { SpamReportDto, SpamReportResultDto } from './dto/spam-report.dto';
import { SpamReportsService } from './spam-reports.service';

/** Who reports through the internal API key (the relay, the spam filter in front of it). */
const REPORTED_BY = 'internal-api';

@ApiTags('internal')
@Controller('api/v1/spamming-mail')
export class SpamReportsController {
  constructor(private readonly spamReports: SpamReportsService) {}

  /**
   * Report a spam message sent through the relay.
   *
   * @remarks
   * For the platform's own systems (the relay and the spam filter in front of it), with the internal API key
   * in `x-api-key` or an `Authorization: Bearer` header; 401 for a wrong key, 503 while INTERNAL_API_KEY is
   * unset. The company is found by `relayUsername`, `companyUuid` or `sender`: one of them is needed (400),
   * and 404 when none matches a company.
   *
   * Answers 201 with a new report, and 200 with the earlier one when the same report (company, message id,
   * recipient) comes again. Reaching SPAM_SUSPEND_THRESHOLD reports in 24 hours suspends the company, which
   * `companySuspended` tells.
   */
  @Post()
  @UseCredential('api-key')
  @ResponseMessage('Spam report received')
  @ApiEnvelope(SpamReportResultDto, 201, 'A new report')
  @ApiEnvelope(SpamReportResultDto, 200, 'The same report had been received before')
  @ApiErrors(400, 404)
  async report(
    @Body() dto: SpamReportDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SpamReportResultDto> {
    const { reportUuid, companySuspended, created } = await this.spamReports.report(dto, REPORTED_BY);
    if (!created) void reply.status(HttpStatus.OK);
    return { reportUuid, companySuspended };
  }
}
