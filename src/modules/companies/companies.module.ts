import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { Billing } from '../billings/entities/billing.entity';
import { Package } from '../packages/entities/package.entity';
import { Contact } from '../users/entities/contact.entity';
import { User } from '../users/entities/user.entity';
import { UsersModule } from '../users/users.module';
import { CompaniesAdminController } from './companies-admin.controller';
import { CompaniesAdminService } from './companies-admin.service';
import { CompaniesController } from './companies.controller';
import { CompaniesService } from './companies.service';
import { CompanyAuditEvent } from './entities/company-audit-event.entity';
import { CompanyUsageDay } from './entities/company-usage-day.entity';
import { Company } from './entities/company.entity';
import { MembersService } from './members.service';
import { SubscriptionService } from './subscription.service';

@Module({
  imports: [
    TypeOrmModule.forFeature([Company, CompanyUsageDay, CompanyAuditEvent, User, Contact, Package, Billing]),
    AuthModule,
    UsersModule,
  ],
  controllers: [CompaniesController, CompaniesAdminController],
  providers: [SubscriptionService, CompaniesService, CompaniesAdminService, MembersService],
  exports: [SubscriptionService, CompaniesService],
})
export class CompaniesModule {}
