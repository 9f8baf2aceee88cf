import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CompaniesModule } from '../companies/companies.module';
import { Package } from '../packages/entities/package.entity';
import { BillingPaymentsService } from './billing-payments.service';
import { Billing } from './entities/billing.entity';
import { PaymentEvent } from './entities/payment-event.entity';

@Module({
  imports: [TypeOrmModule.forFeature([Billing, PaymentEvent, Package]), CompaniesModule],
  providers: [BillingPaymentsService],
  exports: [BillingPaymentsService],
})
export class BillingsModule {}
