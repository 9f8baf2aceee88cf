import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Billing } from '../billings/entities/billing.entity';
import { Company } from '../companies/entities/company.entity';
import { Package } from './entities/package.entity';
import { PackagesAdminController } from './packages-admin.controller';
import { PackagesService } from './packages.service';

@Module({
  imports: [TypeOrmModule.forFeature([Package, Company, Billing])],
  controllers: [PackagesAdminController],
  providers: [PackagesService],
  exports: [PackagesService],
})
export class PackagesModule {}
