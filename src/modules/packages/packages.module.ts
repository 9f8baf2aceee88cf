import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BillingRecordsModule } from '../billings/billing-records.module';
import { CompanyRelayModule } from '../companies/company-relay.module';
import { Package } from './entities/package.entity';
import { PackagesAdminController } from './packages-admin.controller';
import { PackagesService } from './packages.service';

@Module({
  imports: [TypeOrmModule.forFeature([Package]), CompanyRelayModule, BillingRecordsModule],
  controllers: [PackagesAdminController],
  providers: [PackagesService],
  exports: [PackagesService],
})
export class PackagesModule {}
