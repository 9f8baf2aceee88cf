import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BillingPackageUsage, LastBillings } from './billing-records';
import { Billing } from './entities/billing.entity';

/**
 * Reads of the billings table for the areas BillingsModule imports (companies, packages), which
 * therefore cannot import BillingsModule back. It imports nothing of another area.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Billing])],
  providers: [BillingPackageUsage, LastBillings],
  exports: [BillingPackageUsage, LastBillings],
})
export class BillingRecordsModule {}
