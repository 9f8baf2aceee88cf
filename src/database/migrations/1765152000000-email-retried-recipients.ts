import { MigrationInterface, QueryRunner, TableColumn, TableIndex } from 'typeorm';

/**
 * A message the relay took for some recipients while it deferred others (4xx at RCPT TO) goes
 * again to those later, in a submission of their own with a queue id of its own: the recipients
 * still to hand over, every queue id the relay gave, and the waiting index keyed on the due time
 * alone (a submitted message with recipients still to hand over waits too).
 */
export class EmailRetriedRecipients1765152000000 implements MigrationInterface {
  name = 'EmailRetriedRecipients1765152000000';

  async up(qr: QueryRunner): Promise<void> {
    await qr.addColumns('emails', [
      new TableColumn({ name: 'pending_recipients', type: 'text', default: "'[]'" }),
      new TableColumn({ name: 'queue_ids', type: 'text', default: "'[]'" }),
    ]);
    await qr.query(`UPDATE emails SET queue_ids = '["' || queue_id || '"]' WHERE queue_id IS NOT NULL`);
    await qr.dropIndex('emails', 'ix_emails_waiting');
    await qr.createIndex(
      'emails',
      new TableIndex({
        name: 'ix_emails_waiting',
        columnNames: ['next_attempt_at', 'id'],
        where: 'next_attempt_at IS NOT NULL',
      }),
    );
  }

  async down(qr: QueryRunner): Promise<void> {
    await qr.dropIndex('emails', 'ix_emails_waiting');
    await qr.createIndex(
      'emails',
      new TableIndex({
        name: 'ix_emails_waiting',
        columnNames: ['next_attempt_at', 'id'],
        where: "status IN ('queued', 'scheduled')",
      }),
    );
    await qr.dropColumn('emails', 'queue_ids');
    await qr.dropColumn('emails', 'pending_recipients');
  }
}
