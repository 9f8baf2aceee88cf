import { Module } from '@nestjs/common';
import { CompaniesModule } from '../companies/companies.module';
import { LogIndexModule } from '../log-index/log-index.module';
import { ReportsAdminController } from './reports-admin.controller';
import { ReportsController } from './reports.controller';
import { ReportsService } from './reports.service';

/** Delivery reports over the clean-log index (endpoints.md `/api/v1/reports`, `/api/v1/admins/reports`). */
@Module({
  imports: [LogIndexModule, CompaniesModule],
  controllers: [ReportsController, ReportsAdminController],
  providers: [ReportsService],
})
export class ReportsModule {}
