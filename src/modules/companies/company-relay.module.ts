import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CompanyRelayLookup } from './company-relay-lookup';
import { CompanyStateEvents } from './company-state-events';
import { Company } from './entities/company.entity';

/**
 * The part of the companies area the relay decision stands on: its lookups and the state
 * change events that invalidate what it caches. CompaniesModule imports and re-exports it, so
 * the API has one CompanyStateEvents; the Postfix policy server imports this module alone.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Company])],
  providers: [CompanyRelayLookup, CompanyStateEvents],
  exports: [CompanyRelayLookup, CompanyStateEvents],
})
export class CompanyRelayModule {}
