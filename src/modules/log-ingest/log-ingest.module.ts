import { Module, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AttributionModule } from '../attribution/attribution.module';
import { CompaniesModule } from '../companies/companies.module';
import { JobRegistry } from '../jobs/job-registry';
import { JobRegistryModule } from '../jobs/job-registry.module';
import { LogIndexModule } from '../log-index/log-index.module';
import { ProviderEventLookupModule } from '../provider-events/provider-event-lookup';
import { SuppressionModule } from '../suppression/suppression.module';
import { DeliveryRecordsService } from './delivery-records.service';
import { LogBatch } from './entities/log-batch.entity';
import { PostfixDelivery } from './entities/postfix-delivery.entity';
import { PostfixQueue } from './entities/postfix-queue.entity';
import { QuotaCountedRecord } from './entities/quota-counted-record.entity';
import { LogIngestController } from './log-ingest.controller';
import { LogIngestService } from './log-ingest.service';

/** Postfix log ingest: the shipper's batches, per-queue facts and delivery lines, and the clean records built from them. */
@Module({
  imports: [
    TypeOrmModule.forFeature([LogBatch, PostfixQueue, PostfixDelivery, QuotaCountedRecord]),
    CompaniesModule,
    AttributionModule,
    SuppressionModule,
    LogIndexModule,
    ProviderEventLookupModule,
    JobRegistryModule,
  ],
  controllers: [LogIngestController],
  providers: [LogIngestService, DeliveryRecordsService],
  exports: [DeliveryRecordsService],
})
export class LogIngestModule implements OnModuleInit {
  constructor(
    private readonly jobs: JobRegistry,
    private readonly ingest: LogIngestService,
  ) {}

  onModuleInit(): void {
    this.jobs.contribute('retry-callbacks', () => this.ingest.retryUnapplied());
  }
}
