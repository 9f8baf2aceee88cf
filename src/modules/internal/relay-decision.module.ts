import { Module } from '@nestjs/common';
import { AttributionModule } from '../attribution/attribution.module';
import { SuppressionListsModule } from '../suppression/suppression-lists';
import { RelayDecisionService } from './relay-decision.service';

/** The relay decision and only what it reads: shared by the API and the Postfix policy server. */
@Module({
  imports: [AttributionModule, SuppressionListsModule],
  providers: [RelayDecisionService],
  exports: [RelayDecisionService],
})
export class RelayDecisionModule {}
