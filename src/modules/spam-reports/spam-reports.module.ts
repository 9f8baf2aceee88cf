import { AttributionModule } from '../attribution/attribution.module';
import { Module } from '@nestjs/common';
import { CompaniesModule } from '../companies/companies.module';
import { SuppressionModule } from '../suppression/suppression.module';
import { SpamReportsController } from './spam-reports.controller';
import { SpamReportsService } from './spam-reports.service';
import { NotificationsModule } from '../notifications/notifications.module';

/** Spam reports about companies' mail: suppression, notification, suspension at the threshold. */
@Module({
  imports: [CompaniesModule, SuppressionModule, AttributionModule, NotificationsModule],
  controllers: [SpamReportsController],
  providers: [SpamReportsService],
})
export class SpamReportsModule {}
