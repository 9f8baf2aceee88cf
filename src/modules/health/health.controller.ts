import { Controller, Get, HttpStatus } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { DomainError } from '../../common/errors/domain-error';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { SkipGeneralRateLimit } from '../../common/rate-limit/rate-limit.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { Public } from '../auth/access.decorators';
import { LogIndex } from '../log-index/log-index';
import { MailService } from '../mail/mail.service';
import { HealthDto, LiveDto } from './dto/health.dto';
import { answersWithin, databaseUp } from './health-checks';

@ApiTags('health')
@Controller('health')
@Public()
@SkipGeneralRateLimit()
export class HealthController {
  constructor(
    private readonly dataSource: DataSource,
    private readonly mail: MailService,
    private readonly logIndex: LogIndex,
  ) {}

  /**
   * Readiness probe.
   *
   * @remarks
   * Public and not rate limited. 200 when the database answers within 2 seconds, with the state of the
   * database, the clean-log index (`down` when it does not answer within 2 seconds: reports and ingest then
   * fail, the relay decision does not) and the mail transport (SMTP, or the log when SMTP_URL is unset); 503
   * when the database is down.
   */
  @Get()
  @ResponseMessage('Service is healthy')
  @ApiEnvelope(HealthDto)
  @ApiErrors(503)
  async health(): Promise<HealthDto> {
    if (!(await databaseUp(this.dataSource)))
      throw new DomainError(HttpStatus.SERVICE_UNAVAILABLE, 'Database is down');
    const index = (await answersWithin(() => this.logIndex.isUp())) ? this.logIndex.kind : 'down';
    return { status: 'ok', checks: { database: 'up', index, mail: this.mail.mode } };
  }

  /**
   * Liveness probe.
   *
   * @remarks
   * Public and not rate limited. Always 200 with `status` ok, and no I/O at all: it only shows that the
   * process serves requests.
   */
  @Get('live')
  @ResponseMessage('Service is alive')
  @ApiEnvelope(LiveDto)
  live(): LiveDto {
    return { status: 'ok' };
  }
}
