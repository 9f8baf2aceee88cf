import { MigrationInterface, QueryRunner, TableColumn } from 'typeorm';
import { datetimeType } from './portable';

/**
 * A queue's company, decided once (integrations.md "Who sent it"): kept on the queue so that a
 * domain deleted or verified by another company later, or an allowed network moved, never moves
 * the queue's records. Queues whose records already have a company keep that one.
 */
export class RelayAttribution1764547200000 implements MigrationInterface {
  name = 'RelayAttribution1764547200000';

  async up(qr: QueryRunner): Promise<void> {
    await qr.addColumns('postfix_queues', [
      new TableColumn({ name: 'company_id', type: 'integer', isNullable: true }),
      new TableColumn({ name: 'attributed_at', type: datetimeType(qr), isNullable: true }),
    ]);
    const attributedRecord = `FROM clean_logs c WHERE c.host = postfix_queues.host
      AND c.queue_id = postfix_queues.queue_id AND c.company_id IS NOT NULL`;
    await qr.query(
      `UPDATE postfix_queues SET company_id = (SELECT MIN(c.company_id) ${attributedRecord}),
        attributed_at = first_seen_at
      WHERE EXISTS (SELECT 1 ${attributedRecord})`,
    );
  }

  async down(qr: QueryRunner): Promise<void> {
    await qr.dropColumn('postfix_queues', 'attributed_at');
    await qr.dropColumn('postfix_queues', 'company_id');
  }
}
