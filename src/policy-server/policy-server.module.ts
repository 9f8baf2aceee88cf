import { Module } from '@nestjs/common';
import { LoggingModule } from '../common/logging/logging.module';
import { AppConfigModule } from '../config/config.module';
import { DatabaseModule } from '../database/database.module';
import { RelayDecisionModule } from '../modules/internal/relay-decision.module';

/** What `npm run policy-server` loads: configuration, logs, the database and the relay decision. */
@Module({
  imports: [AppConfigModule, LoggingModule, DatabaseModule, RelayDecisionModule],
})
export class PolicyServerModule {}
