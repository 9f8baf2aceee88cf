import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Notifier } from '../notifications/notifier';
import type { Webhook } from './entities/webhook.entity';

const WHY: Record<'gone' | 'failing', string> = {
  gone: 'its receiver answered 410 Gone',
  failing: 'it has not accepted an event for 5 days (20 failed attempts or more)',
};

/** Tells the company's owners that an endpoint was disabled (platform.md "Delivery"): a notification and an e-mail. */
@Injectable()
export class WebhookDisabledNotices {
  constructor(private readonly notifier: Notifier) {}

  /** In the transaction that disabled it: the e-mails leave once it has committed. */
  async tell(em: EntityManager, webhook: Webhook, reason: 'gone' | 'failing'): Promise<void> {
    await this.notifier.notifyCompanyOwners(
      webhook.companyId,
      {
        type: 'webhook.disabled',
        title: 'A webhook endpoint was disabled',
        body:
          `The endpoint ${webhook.url} was disabled because ${WHY[reason]}. Its events wait as failed ` +
          'deliveries: enable it again (PATCH /api/v1/webhooks/:uuid with enabled: true) and replay them.',
        data: { webhookUuid: webhook.uuid, reason },
        email: true,
      },
      em,
    );
  }
}
