import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CompaniesModule } from '../companies/companies.module';
import { WebhookOutboxModule } from '../webhooks/webhook-outbox.module';
import { SuppressionEntry } from './entities/suppression-entry.entity';
import { SuppressionListsModule } from './suppression-lists';
import { SuppressionAdminController } from './suppression-admin.controller';
import { SuppressionController } from './suppression.controller';
import { SuppressionService } from './suppression.service';

/** Suppression lists: each company's and the global one (resources.md "Suppression entry"). */
@Module({
  imports: [
    TypeOrmModule.forFeature([SuppressionEntry]),
    CompaniesModule,
    SuppressionListsModule,
    WebhookOutboxModule,
  ],
  controllers: [SuppressionController, SuppressionAdminController],
  providers: [SuppressionService],
  exports: [SuppressionService, SuppressionListsModule],
})
export class SuppressionModule {}
