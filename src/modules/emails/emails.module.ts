import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RelayDecisionModule } from '../internal/relay-decision.module';
import { LogIndexModule } from '../log-index/log-index.module';
import { RelaySubmissionModule } from '../relay-submission/relay-submission.module';
import { WebhookOutboxModule } from '../webhooks/webhook-outbox.module';
import { EmailSubmissionWorker } from './email-submission-worker';
import { EmailWork } from './email-work';
import { EmailsController } from './emails.controller';
import { EmailsService } from './emails.service';
import { Email } from './entities/email.entity';
import { IdempotencyKey } from './entities/idempotency-key.entity';
import { IdempotencyKeys } from './idempotency-keys';

/** Sending by HTTP: the routes, the idempotency keys and the worker that hands messages to the relay. */
@Module({
  imports: [
    TypeOrmModule.forFeature([Email, IdempotencyKey]),
    RelayDecisionModule,
    RelaySubmissionModule,
    LogIndexModule,
    WebhookOutboxModule,
  ],
  controllers: [EmailsController],
  providers: [EmailsService, IdempotencyKeys, EmailSubmissionWorker, EmailWork],
})
export class EmailsModule {}
