import { Module, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { JobRegistry } from '../jobs/job-registry';
import { JobRegistryModule } from '../jobs/job-registry.module';
import { LogIngestModule } from '../log-ingest/log-ingest.module';
import { ProviderEvent } from './entities/provider-event.entity';
import { ProviderEventsController } from './provider-events.controller';
import { ProviderEventsService } from './provider-events.service';

/** The mail provider's delivery events (integrations.md "Mail provider delivery events"). */
@Module({
  imports: [TypeOrmModule.forFeature([ProviderEvent]), LogIngestModule, JobRegistryModule],
  controllers: [ProviderEventsController],
  providers: [ProviderEventsService],
})
export class ProviderEventsModule implements OnModuleInit {
  constructor(
    private readonly jobs: JobRegistry,
    private readonly events: ProviderEventsService,
  ) {}

  onModuleInit(): void {
    this.jobs.contribute('retry-callbacks', () => this.events.retryUnapplied());
  }
}
