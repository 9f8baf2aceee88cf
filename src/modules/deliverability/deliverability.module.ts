import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CompaniesModule } from '../companies/companies.module';
import { DeliveryModule } from '../delivery/delivery.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { WebhookOutboxModule } from '../webhooks/webhook-outbox.module';
import { DeliverabilityAdminController } from './deliverability-admin.controller';
import { DeliverabilityAlertsService } from './deliverability-alerts.service';
import { DeliverabilityReportsService } from './deliverability-reports.service';
import { DeliverabilityController } from './deliverability.controller';
import { BounceSample } from './entities/bounce-sample.entity';
import { DeliverabilityAlert } from './entities/deliverability-alert.entity';
import { DeliverabilityHour } from './entities/deliverability-hour.entity';

/**
 * Deliverability (deliverability.md): the provider and bounce-category reports and the alerts,
 * over the hourly roll-up the delivery records' rebuild keeps (DeliverabilityRollUpModule).
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([DeliverabilityHour, BounceSample, DeliverabilityAlert]),
    CompaniesModule,
    DeliveryModule,
    NotificationsModule,
    WebhookOutboxModule,
  ],
  controllers: [DeliverabilityController, DeliverabilityAdminController],
  providers: [DeliverabilityReportsService, DeliverabilityAlertsService],
})
export class DeliverabilityModule {}
