import { Module } from '@nestjs/common';
import { RelayDecisionModule } from './relay-decision.module';
import { RelayDecisionController } from './relay-decision.controller';

/** The relay's questions to the service over HTTP: the relay decision. */
@Module({
  imports: [RelayDecisionModule],
  controllers: [RelayDecisionController],
})
export class InternalModule {}
