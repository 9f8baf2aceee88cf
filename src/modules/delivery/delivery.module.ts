import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WebhookOutboxModule } from '../webhooks/webhook-outbox.module';
import { DeliverabilityRollUpModule } from '../deliverability/deliverability-roll-up';
import { EmailLinksModule } from '../emails/email-links';
import { AttributionModule } from '../attribution/attribution.module';
import { CompaniesModule } from '../companies/companies.module';
import { LogIndexModule } from '../log-index/log-index.module';
import { SuppressionModule } from '../suppression/suppression.module';
import { DeliveryRecordsService } from './delivery-records.service';
import { LogBatch } from './entities/log-batch.entity';
import { PostfixDelivery } from './entities/postfix-delivery.entity';
import { PostfixQueue } from './entities/postfix-queue.entity';
import { ProviderEvent } from './entities/provider-event.entity';
import { QuotaCountedRecord } from './entities/quota-counted-record.entity';
import { LogBatchesController } from './log-batches.controller';
import { LogBatchesService } from './log-batches.service';
import { DeliveryFacts } from './delivery-facts';
import { ProviderEventsController } from './provider-events.controller';
import { ProviderEventsService } from './provider-events.service';

/**
 * Delivery data (integrations.md "Log shipper", "Mail provider delivery events"): what the log
 * shipper and the mail provider send, stored as it came, the facts it brings, and the clean
 * records built from them, written through LogIndex (its storage port) and read by reports.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([LogBatch, PostfixQueue, PostfixDelivery, QuotaCountedRecord, ProviderEvent]),
    CompaniesModule,
    AttributionModule,
    SuppressionModule,
    LogIndexModule,
    WebhookOutboxModule,
    EmailLinksModule,
    DeliverabilityRollUpModule,
  ],
  controllers: [LogBatchesController, ProviderEventsController],
  providers: [LogBatchesService, ProviderEventsService, DeliveryRecordsService, DeliveryFacts],
  exports: [DeliveryRecordsService],
})
export class DeliveryModule {}
