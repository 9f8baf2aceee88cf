import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CompanyAuditEvent } from './entities/company-audit-event.entity';
import { CompanyUsageDay } from './entities/company-usage-day.entity';
import { Company } from './entities/company.entity';
import { SubscriptionService } from './subscription.service';

@Module({
  imports: [TypeOrmModule.forFeature([Company, CompanyUsageDay, CompanyAuditEvent])],
  providers: [SubscriptionService],
  exports: [SubscriptionService],
})
export class CompaniesModule {}
