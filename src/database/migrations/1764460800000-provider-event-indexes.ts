import { MigrationInterface, QueryRunner, TableIndex } from 'typeorm';

/**
 * Provider events: no read looks an event up by its record, so that index only slowed every
 * insert and the update that applies an event; the retry job reads the events whose application
 * failed, a few among many, so its index holds only those.
 */
export class ProviderEventIndexes1764460800000 implements MigrationInterface {
  name = 'ProviderEventIndexes1764460800000';

  async up(qr: QueryRunner): Promise<void> {
    await qr.dropIndex('provider_events', 'ix_provider_events_record');
    await qr.dropIndex('provider_events', 'ix_provider_events_apply_error');
    await qr.createIndex(
      'provider_events',
      new TableIndex({
        name: 'ix_provider_events_apply_error',
        columnNames: ['id'],
        where: 'apply_error IS NOT NULL',
      }),
    );
  }

  async down(qr: QueryRunner): Promise<void> {
    await qr.dropIndex('provider_events', 'ix_provider_events_apply_error');
    await qr.createIndex(
      'provider_events',
      new TableIndex({ name: 'ix_provider_events_apply_error', columnNames: ['apply_error'] }),
    );
    await qr.createIndex(
      'provider_events',
      new TableIndex({ name: 'ix_provider_events_record', columnNames: ['record_id'] }),
    );
  }
}
