import { Module } from '@nestjs/common';
import { MetricsAccessGuard } from './metrics-access.guard';
import { MetricsController } from './metrics.controller';
import { MetricsService } from './metrics.service';

/** `GET /metrics` (Prometheus) of the API; the relay agent serves the same on its own listener. */
@Module({
  controllers: [MetricsController],
  providers: [MetricsService, MetricsAccessGuard],
  exports: [MetricsService],
})
export class MetricsModule {}

/** The metrics without the route: the relay agent's application. */
@Module({ providers: [MetricsService], exports: [MetricsService] })
export class MetricsServiceModule {}
