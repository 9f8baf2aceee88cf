import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RelaySubmissionModule } from '../relay-submission/relay-submission.module';
import { CompanyIdLookup } from './company-id-lookup';
import { CompanyPackageUsage } from './company-package-usage';
import { CompanyRelayLookup } from './company-relay-lookup';
import { CompanyStateEvents } from './company-state-events';
import { Company } from './entities/company.entity';
import { RelayCredentials } from './relay-credentials';

/**
 * The part of the companies area the relay agent stands on: the relay decision's lookups, the
 * state change events that invalidate what it caches, and the SMTP AUTH credentials check (relay
 * passwords, and the submission tokens of RelaySubmissionModule).
 * CompaniesModule imports and re-exports it, so the API has one CompanyStateEvents; the relay
 * agent imports this module alone. It imports nothing that imports the companies area, so the
 * areas CompaniesModule imports read companies through it too (packages: CompanyPackageUsage;
 * notifications: CompanyIdLookup).
 */
@Module({
  imports: [TypeOrmModule.forFeature([Company]), RelaySubmissionModule],
  providers: [CompanyIdLookup, CompanyPackageUsage, CompanyRelayLookup, CompanyStateEvents, RelayCredentials],
  exports: [CompanyIdLookup, CompanyPackageUsage, CompanyRelayLookup, CompanyStateEvents, RelayCredentials],
})
export class CompanyRelayModule {}
