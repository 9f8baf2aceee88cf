import { Controller, Get, HttpStatus } from '@nestjs/common';
import { ApiProperty, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { DomainError } from '../../common/errors/domain-error';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { SkipGeneralRateLimit } from '../../common/rate-limit/rate-limit.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { Public } from '../auth/access.decorators';
import { MailService } from '../mail/mail.service';

class LiveDto {
  @ApiProperty({ enum: ['ok'] }) status: 'ok';
}

class HealthChecksDto {
  @ApiProperty({ enum: ['up', 'down'] }) database: 'up' | 'down';
  /** `sql` until the clean-log index area arrives. */
  @ApiProperty({ enum: ['sql', 'elasticsearch', 'down'] }) index: string;
  @ApiProperty({ enum: ['smtp', 'log'] }) mail: 'smtp' | 'log';
}

class HealthDto {
  @ApiProperty({ enum: ['ok'] }) status: 'ok';
  @ApiProperty({ type: HealthChecksDto }) checks: HealthChecksDto;
}

const DATABASE_CHECK_TIMEOUT_MS = 2000;

@ApiTags('health')
@Controller('health')
@Public()
@SkipGeneralRateLimit()
export class HealthController {
  constructor(
    private readonly dataSource: DataSource,
    private readonly mail: MailService,
  ) {}

  /**
   * Readiness probe.
   *
   * @remarks
   * Public and not rate limited. 200 when the database answers within 2 seconds, with the state of the
   * database, the clean-log index and the mail transport (SMTP, or the log when SMTP_URL is unset); 503 when
   * the database is down.
   */
  @Get()
  @ResponseMessage('Service is healthy')
  @ApiEnvelope(HealthDto)
  @ApiErrors(503)
  async health(): Promise<HealthDto> {
    if (!(await this.databaseUp())) throw new DomainError(HttpStatus.SERVICE_UNAVAILABLE, 'Database is down');
    return { status: 'ok', checks: { database: 'up', index: 'sql', mail: this.mail.mode } };
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

  private async databaseUp(): Promise<boolean> {
    if (!this.dataSource.isInitialized) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), DATABASE_CHECK_TIMEOUT_MS);
    });
    const query = this.dataSource.query('SELECT 1').then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([query, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
