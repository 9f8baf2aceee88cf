import { MigrationInterface, QueryRunner, TableIndex } from 'typeorm';

/**
 * Provider events are read by the keys that match them to a record (the provider's message id,
 * else the Message-ID), not by recipient: a busy recipient gathers thousands of events, and every
 * rebuild of one of its records read them all (47 ms a read at 50 hosts shipping at once).
 */
export class ProviderEventKeys1765411200000 implements MigrationInterface {
  name = 'ProviderEventKeys1765411200000';

  async up(qr: QueryRunner): Promise<void> {
    await qr.dropIndex('provider_events', 'ix_provider_events_recipient');
    await qr.createIndex(
      'provider_events',
      new TableIndex({ name: 'ix_provider_events_provider_message', columnNames: ['provider_message_id'] }),
    );
    await qr.createIndex(
      'provider_events',
      new TableIndex({ name: 'ix_provider_events_message', columnNames: ['message_id'] }),
    );
  }

  async down(qr: QueryRunner): Promise<void> {
    await qr.dropIndex('provider_events', 'ix_provider_events_message');
    await qr.dropIndex('provider_events', 'ix_provider_events_provider_message');
    await qr.createIndex(
      'provider_events',
      new TableIndex({ name: 'ix_provider_events_recipient', columnNames: ['recipient'] }),
    );
  }
}
