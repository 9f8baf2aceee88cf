import { Controller, Get, Header, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RawResponse } from '../../common/http/response-message.decorator';
import { SkipGeneralRateLimit } from '../../common/rate-limit/rate-limit.decorator';
import { ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { Public } from '../auth/access.decorators';
import { METRICS_REGISTRY } from './metrics';
import { MetricsAccessGuard } from './metrics-access.guard';
import { MetricsService } from './metrics.service';

@ApiTags('metrics')
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  /**
   * Prometheus metrics.
   *
   * @remarks
   * The Prometheus text exposition format (`text/plain; version=0.0.4`), not an envelope: HTTP requests by
   * route pattern and status with latency histograms, relay decisions, SMTP AUTH, the milter, log and
   * provider-event ingest, inbound events stored but not applied, job runs, the database pool, event-loop
   * delay and memory (docs/operator-guide.md "Metrics"). With `METRICS_TOKEN` set, `Authorization: Bearer
   * <METRICS_TOKEN>` (401 without it); unset, only from loopback and not through a proxy (403 otherwise).
   * Errors are JSON envelopes. Not rate limited.
   */
  @Get()
  // The global access guard lets it through (no bearer token, no machine credential of auth.md):
  // MetricsAccessGuard holds it to METRICS_TOKEN or loopback.
  @Public()
  @UseGuards(MetricsAccessGuard)
  @SkipGeneralRateLimit()
  @RawResponse()
  @Header('content-type', METRICS_REGISTRY.contentType)
  @Header('cache-control', 'no-store')
  @ApiBearerAuth('metrics-token')
  @ApiOkResponse({
    description: 'The metrics, in the Prometheus text exposition format',
    content: { 'text/plain; version=0.0.4': { schema: { type: 'string' } } },
  })
  @ApiErrors(401, 403)
  metricsText(): Promise<string> {
    return this.metrics.exposition();
  }
}
