import { Module } from '@nestjs/common';
import { CompanyRelayModule } from '../companies/company-relay.module';
import { DomainLookupModule } from '../domains/domain-lookup';
import { SuppressionListsModule } from '../suppression/suppression-lists';
import { RelayDecisionService } from './relay-decision.service';

/** The relay decision and only what it reads: shared by the API and the Postfix policy server. */
@Module({
  imports: [CompanyRelayModule, DomainLookupModule, SuppressionListsModule],
  providers: [RelayDecisionService],
  exports: [RelayDecisionService],
})
export class RelayDecisionModule {}
