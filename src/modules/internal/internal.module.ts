import { Module } from '@nestjs/common';
import { RelayDecisionModule } from './relay-decision.module';
import { RelayStatusController } from './relay-status.controller';

/** The relay's questions to the service over HTTP: the relay decision. */
@Module({
  imports: [RelayDecisionModule],
  controllers: [RelayStatusController],
})
export class InternalModule {}
