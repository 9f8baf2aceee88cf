import { Module } from '@nestjs/common';
import { LoggingModule } from '../common/logging/logging.module';
import { AppConfigModule } from '../config/config.module';
import { DatabaseModule } from '../database/database.module';
import { AttributionModule } from '../modules/attribution/attribution.module';
import { DomainSigningModule } from '../modules/domains/domain-signing.module';
import { RelayDecisionModule } from '../modules/internal/relay-decision.module';
import { MetricsServiceModule } from '../modules/metrics/metrics.module';
import { RelayMilterDecisions } from './relay-milter-decisions';
import { SaslModule } from './sasl/sasl.module';

/**
 * What `npm run relay-agent` loads: configuration, logs, the database, the relay decision, SMTP
 * AUTH, the milter's decisions (attribution and DKIM keys) and the metrics of its HTTP listener.
 */
@Module({
  imports: [
    AppConfigModule,
    LoggingModule,
    DatabaseModule,
    RelayDecisionModule,
    SaslModule,
    AttributionModule,
    DomainSigningModule,
    MetricsServiceModule,
  ],
  providers: [RelayMilterDecisions],
})
export class RelayAgentModule {}
