import { Module } from '@nestjs/common';
import { LoggingModule } from '../../common/logging/logging.module';
import { AppConfigModule } from '../../config/config.module';
import { DatabaseModule } from '../../database/database.module';
import { RelayDecisionModule } from '../../modules/internal/relay-decision.module';

/**
 * The relay agent's policy side alone (configuration, logs, the database and the relay
 * decision), for tests that ask the decision of another process; `npm run relay-agent` loads
 * RelayAgentModule.
 */
@Module({
  imports: [AppConfigModule, LoggingModule, DatabaseModule, RelayDecisionModule],
})
export class PolicyServerModule {}
