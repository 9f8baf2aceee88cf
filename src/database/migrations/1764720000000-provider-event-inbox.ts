import { MigrationInterface, QueryRunner, TableColumn, TableIndex } from 'typeorm';
import { datetimeType } from './portable';

/**
 * Mail-provider events on the one inbound-event path (InboundEventInbox): the columns every
 * inbound table has (`webhook_id`, `outcome`, `attempts`, `last_error`, `applied_at`) in place of
 * their own `apply_error`. Existing rows: applied to a record → `applied`; waiting for their
 * message → `waiting` (applied when it arrives, not retried); failed → unapplied, error kept.
 * The retry job reads the unapplied events, a few among many: its index holds only those.
 */
export class ProviderEventInbox1764720000000 implements MigrationInterface {
  name = 'ProviderEventInbox1764720000000';

  async up(qr: QueryRunner): Promise<void> {
    await qr.dropIndex('provider_events', 'ix_provider_events_apply_error');
    await qr.addColumns('provider_events', [
      new TableColumn({
        name: 'webhook_id',
        type: 'varchar',
        length: '200',
        isNullable: true,
        isUnique: true,
      }),
      new TableColumn({ name: 'outcome', type: 'varchar', length: '16', isNullable: true }),
      new TableColumn({ name: 'attempts', type: 'integer', default: 0 }),
      new TableColumn({ name: 'last_error', type: 'varchar', length: '1000', isNullable: true }),
      new TableColumn({ name: 'applied_at', type: datetimeType(qr), isNullable: true }),
    ]);
    await qr.query(
      `UPDATE provider_events SET outcome = 'applied', applied_at = created_at, attempts = 1 WHERE record_id IS NOT NULL`,
    );
    await qr.query(
      `UPDATE provider_events SET outcome = 'waiting', applied_at = created_at, attempts = 1
       WHERE record_id IS NULL AND apply_error IS NULL`,
    );
    await qr.query(
      `UPDATE provider_events SET last_error = apply_error, attempts = 1 WHERE apply_error IS NOT NULL`,
    );
    await qr.dropColumn('provider_events', 'apply_error');
    await qr.createIndex(
      'provider_events',
      new TableIndex({ name: 'ix_provider_events_unapplied', columnNames: ['id'], where: 'outcome IS NULL' }),
    );
  }

  async down(qr: QueryRunner): Promise<void> {
    await qr.dropIndex('provider_events', 'ix_provider_events_unapplied');
    await qr.addColumn(
      'provider_events',
      new TableColumn({ name: 'apply_error', type: 'varchar', length: '1000', isNullable: true }),
    );
    await qr.query(`UPDATE provider_events SET apply_error = last_error WHERE outcome IS NULL`);
    for (const column of ['webhook_id', 'outcome', 'attempts', 'last_error', 'applied_at']) {
      await qr.dropColumn('provider_events', column);
    }
    await qr.createIndex(
      'provider_events',
      new TableIndex({
        name: 'ix_provider_events_apply_error',
        columnNames: ['id'],
        where: 'apply_error IS NOT NULL',
      }),
    );
  }
}
