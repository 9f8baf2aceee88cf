import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WebhookOutboxModule } from '../webhooks/webhook-outbox.module';
import { AuthModule } from '../auth/auth.module';
import { BillingRecordsModule } from '../billings/billing-records.module';
import { CrmOutboxModule } from '../crm/crm-outbox.module';
import { DomainsModule } from '../domains/domains.module';
import { PackagesModule } from '../packages/packages.module';
import { UsersModule } from '../users/users.module';
import { CompaniesAdminController } from './companies-admin.controller';
import { CompaniesAdminService } from './companies-admin.service';
import { CompaniesController } from './companies.controller';
import { CompaniesService } from './companies.service';
import { CompanyMailboxSettingsService } from './company-mailbox-settings';
import { CompanyRegistrationController } from './company-registration.controller';
import { CompanyRegistrationService } from './company-registration.service';
import { CompanyRelayModule } from './company-relay.module';
import { CompanyStateService } from './company-state.service';
import { CompanyAuditEvent } from './entities/company-audit-event.entity';
import { CompanyUsageDay } from './entities/company-usage-day.entity';
import { Company } from './entities/company.entity';
import { MembersService } from './members.service';
import { NotificationsModule } from '../notifications/notifications.module';

@Module({
  imports: [
    TypeOrmModule.forFeature([Company, CompanyUsageDay, CompanyAuditEvent]),
    AuthModule,
    BillingRecordsModule,
    CrmOutboxModule,
    UsersModule,
    PackagesModule,
    DomainsModule,
    CompanyRelayModule,
    WebhookOutboxModule,
    NotificationsModule,
  ],
  controllers: [CompanyRegistrationController, CompaniesController, CompaniesAdminController],
  providers: [
    CompanyMailboxSettingsService,
    CompanyRegistrationService,
    CompanyStateService,
    CompaniesService,
    CompaniesAdminService,
    MembersService,
  ],
  exports: [CompanyMailboxSettingsService, CompanyRelayModule, CompanyStateService, CompaniesService],
})
export class CompaniesModule {}
