import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { AllExceptionsFilter } from './common/errors/all-exceptions.filter';
import { LoggingModule } from './common/logging/logging.module';
import { RateLimitGuard } from './common/rate-limit/rate-limit.guard';
import { RateLimitModule } from './common/rate-limit/rate-limit.module';
import { AppValidationPipe } from './common/validation/app-validation.pipe';
import { AppConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { AdminsModule } from './modules/admins/admins.module';
import { ApiKeysModule } from './modules/api-keys/api-keys.module';
import { AuthModule } from './modules/auth/auth.module';
import { BillingsModule } from './modules/billings/billings.module';
import { CallbacksModule } from './modules/callbacks/callbacks.module';
import { CompaniesModule } from './modules/companies/companies.module';
import { CrmModule } from './modules/crm/crm.module';
import { DomainsModule } from './modules/domains/domains.module';
import { HealthModule } from './modules/health/health.module';
import { DeliveryModule } from './modules/delivery/delivery.module';
import { ReportsModule } from './modules/reports/reports.module';
import { DeliverabilityModule } from './modules/deliverability/deliverability.module';
import { InternalModule } from './modules/internal/internal.module';
import { JobsModule } from './modules/jobs/jobs.module';
import { MailModule } from './modules/mail/mail.module';
import { MailboxSuitesModule } from './modules/mailbox-suites/mailbox-suites.module';
import { MetricsModule } from './modules/metrics/metrics.module';
import { NotificationsModule } from './modules/notifications/notifications.module';
import { PackagesModule } from './modules/packages/packages.module';
import { PaymentGatewayModule } from './modules/payment-gateway/payment-gateway.module';
import { SpamReportsModule } from './modules/spam-reports/spam-reports.module';
import { SuppressionModule } from './modules/suppression/suppression.module';
import { UsersModule } from './modules/users/users.module';
import { WebhooksModule } from './modules/webhooks/webhooks.module';
import { EmailsModule } from './modules/emails/emails.module';

@Module({
  imports: [
    AppConfigModule,
    LoggingModule,
    DatabaseModule,
    ScheduleModule.forRoot(),
    JobsModule,
    RateLimitModule,
    MailModule,
    AuthModule,
    UsersModule,
    AdminsModule,
    NotificationsModule,
    CompaniesModule,
    PackagesModule,
    SuppressionModule,
    SpamReportsModule,
    BillingsModule,
    PaymentGatewayModule,
    CallbacksModule,
    DomainsModule,
    ApiKeysModule,
    WebhooksModule,
    EmailsModule,
    InternalModule,
    DeliveryModule,
    ReportsModule,
    DeliverabilityModule,
    MailboxSuitesModule,
    CrmModule,
    HealthModule,
    MetricsModule,
  ],
  providers: [
    // The first global guard (AppModule's providers are registered before its imports'), so rate
    // limiting comes before authentication (AuthModule's guard) and refused credentials count too.
    { provide: APP_GUARD, useClass: RateLimitGuard },
    { provide: APP_PIPE, useClass: AppValidationPipe },
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
  ],
})
export class AppModule {}
