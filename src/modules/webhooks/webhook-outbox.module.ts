import { Module } from '@nestjs/common';
import { WebhookOutbox, WebhookWork } from './webhook-outbox';

/**
 * Where the areas write the events of their changes (WebhookOutbox), imported by each of them;
 * the endpoints, routes and dispatcher are WebhooksModule's, which imports those areas.
 */
@Module({
  providers: [WebhookOutbox, WebhookWork],
  exports: [WebhookOutbox, WebhookWork],
})
export class WebhookOutboxModule {}
