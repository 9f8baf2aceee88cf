import { Module } from '@nestjs/common';
import { CompanyRelayModule } from '../companies/company-relay.module';
import { DomainLookupModule } from '../domains/domain-lookup';
import { CompanyAttribution } from './company-attribution.service';

/**
 * Who sent a message, decided one way (integrations.md "Who sent it"): the only module that
 * reads the companies' and domains' relay lookups. The relay decision, log ingest, spam reports
 * and the relay agent ask it.
 */
@Module({
  imports: [CompanyRelayModule, DomainLookupModule],
  providers: [CompanyAttribution],
  exports: [CompanyAttribution],
})
export class AttributionModule {}
