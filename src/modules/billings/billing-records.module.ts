import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LastBillings } from './billing-records';
import { Billing } from './entities/billing.entity';

/**
 * Reads of the billings table for the areas BillingsModule imports (companies), which therefore
 * cannot import BillingsModule back. It imports nothing of another area.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Billing])],
  providers: [LastBillings],
  exports: [LastBillings],
})
export class BillingRecordsModule {}
