import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DomainsModule } from '../domains/domains.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { WebhookAttempt } from './entities/webhook-attempt.entity';
import { WebhookDelivery } from './entities/webhook-delivery.entity';
import { WebhookEvent } from './entities/webhook-event.entity';
import { Webhook } from './entities/webhook.entity';
import { WebhookAttemptsPurge } from './webhook-attempts-purge';
import { WebhookDisabledNotices } from './webhook-disabled-notices';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookOutboxModule } from './webhook-outbox.module';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/** Event webhooks: the endpoints and their routes, and the dispatcher that delivers the outbox's events. */
@Module({
  imports: [
    TypeOrmModule.forFeature([Webhook, WebhookEvent, WebhookDelivery, WebhookAttempt]),
    WebhookOutboxModule,
    DomainsModule,
    NotificationsModule,
  ],
  controllers: [WebhooksController],
  providers: [WebhooksService, WebhookDispatcher, WebhookDisabledNotices, WebhookAttemptsPurge],
})
export class WebhooksModule {}
