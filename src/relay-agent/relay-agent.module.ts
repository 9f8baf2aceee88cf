import { Module } from '@nestjs/common';
import { LoggingModule } from '../common/logging/logging.module';
import { AppConfigModule } from '../config/config.module';
import { DatabaseModule } from '../database/database.module';
import { RelayDecisionModule } from '../modules/internal/relay-decision.module';
import { SaslModule } from './sasl/sasl.module';

/** What `npm run relay-agent` loads: configuration, logs, the database, the relay decision and SMTP AUTH. */
@Module({
  imports: [AppConfigModule, LoggingModule, DatabaseModule, RelayDecisionModule, SaslModule],
})
export class RelayAgentModule {}
