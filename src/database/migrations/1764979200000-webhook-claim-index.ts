import { MigrationInterface, QueryRunner, TableIndex } from 'typeorm';

/**
 * The webhook dispatcher claims each endpoint's first due deliveries: an index of the pending
 * deliveries only, by endpoint and due time, answers that with a few probes however many
 * deliveries were made before; the index by status and due time made every claim rank the whole
 * backlog.
 */
export class WebhookClaimIndex1764979200000 implements MigrationInterface {
  name = 'WebhookClaimIndex1764979200000';

  async up(qr: QueryRunner): Promise<void> {
    await qr.dropIndex('webhook_deliveries', 'ix_webhook_deliveries_due');
    await qr.createIndex(
      'webhook_deliveries',
      new TableIndex({
        name: 'ix_webhook_deliveries_pending',
        columnNames: ['webhook_id', 'next_attempt_at', 'id'],
        where: "status = 'pending'",
      }),
    );
  }

  async down(qr: QueryRunner): Promise<void> {
    await qr.dropIndex('webhook_deliveries', 'ix_webhook_deliveries_pending');
    await qr.createIndex(
      'webhook_deliveries',
      new TableIndex({ name: 'ix_webhook_deliveries_due', columnNames: ['status', 'next_attempt_at'] }),
    );
  }
}
