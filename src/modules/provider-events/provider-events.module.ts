import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LogIngestModule } from '../log-ingest/log-ingest.module';
import { ProviderEvent } from './entities/provider-event.entity';
import { ProviderEventsController } from './provider-events.controller';
import { ProviderEventsService } from './provider-events.service';

/** The mail provider's delivery events (integrations.md "Mail provider delivery events"). */
@Module({
  imports: [TypeOrmModule.forFeature([ProviderEvent]), LogIngestModule],
  controllers: [ProviderEventsController],
  providers: [ProviderEventsService],
})
export class ProviderEventsModule {}
