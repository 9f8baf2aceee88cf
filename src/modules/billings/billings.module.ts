import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CompaniesModule } from '../companies/companies.module';
import { PackagesModule } from '../packages/packages.module';
import { BillingPaymentsService } from './billing-payments.service';
import { BillingReportsService } from './billing-reports.service';
import { BillingReviewsService } from './billing-reviews.service';
import { BillingsAdminController } from './billings-admin.controller';
import { BillingsController } from './billings.controller';
import { BillingsService } from './billings.service';
import { BillingsJobs } from './billings-jobs';
import { Billing } from './entities/billing.entity';
import { PaymentEvent } from './entities/payment-event.entity';
import { PaymentCallbacksService } from './payment-callbacks.service';
import { RevenueReportAdminController } from './revenue-report-admin.controller';
import { NotificationsModule } from '../notifications/notifications.module';

@Module({
  imports: [
    TypeOrmModule.forFeature([Billing, PaymentEvent]),
    CompaniesModule,
    PackagesModule,
    NotificationsModule,
  ],
  controllers: [BillingsController, BillingsAdminController, RevenueReportAdminController],
  providers: [
    BillingPaymentsService,
    BillingsService,
    BillingReviewsService,
    BillingReportsService,
    BillingsJobs,
    PaymentCallbacksService,
  ],
  exports: [BillingPaymentsService, BillingsService, PaymentCallbacksService],
})
export class BillingsModule {}
