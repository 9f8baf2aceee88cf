import { MigrationInterface, QueryRunner, Table, TableForeignKey, TableIndex } from 'typeorm';
import { datetimeType, idColumn, nowDefault, timestampColumns, uuidColumn } from './portable';

/**
 * Event webhooks (platform.md "Event webhooks"): the endpoints, the events written in the
 * transaction of the change that made them (one per fact: `fact_key` is unique), one delivery per
 * event and endpoint, and every attempt (kept 30 days).
 */
export class Webhooks1764892800000 implements MigrationInterface {
  name = 'Webhooks1764892800000';

  async up(qr: QueryRunner): Promise<void> {
    const datetime = datetimeType(qr);
    const cascade = (column: string, table: string) =>
      new TableForeignKey({
        columnNames: [column],
        referencedTableName: table,
        referencedColumnNames: ['id'],
        onDelete: 'CASCADE',
      });
    await qr.createTable(
      new Table({
        name: 'webhooks',
        columns: [
          idColumn(),
          uuidColumn(),
          { name: 'company_id', type: 'integer' },
          { name: 'url', type: 'varchar', length: '2048' },
          { name: 'description', type: 'varchar', length: '500', isNullable: true },
          { name: 'events', type: 'text' },
          { name: 'domains', type: 'text', default: "'[]'" },
          { name: 'enabled', type: 'boolean', default: true },
          { name: 'disabled_reason', type: 'varchar', length: '16', isNullable: true },
          { name: 'secret', type: 'text' },
          { name: 'previous_secret', type: 'text', isNullable: true },
          { name: 'previous_secret_until', type: datetime, isNullable: true },
          { name: 'last_success_at', type: datetime, isNullable: true },
          { name: 'last_failure_at', type: datetime, isNullable: true },
          { name: 'failing_since', type: datetime, isNullable: true },
          ...timestampColumns(qr),
        ],
        foreignKeys: [cascade('company_id', 'companies')],
        indices: [new TableIndex({ name: 'ix_webhooks_company', columnNames: ['company_id'] })],
      }),
    );
    await qr.createTable(
      new Table({
        name: 'webhook_events',
        columns: [
          idColumn(),
          { name: 'event_id', type: 'varchar', length: '40', isUnique: true },
          { name: 'company_id', type: 'integer' },
          { name: 'type', type: 'varchar', length: '40' },
          { name: 'payload', type: 'text' },
          { name: 'record_id', type: 'varchar', length: '64', isNullable: true },
          { name: 'seq', type: 'integer', isNullable: true },
          { name: 'fact_key', type: 'varchar', length: '64', isNullable: true, isUnique: true },
          { name: 'created_at', type: datetime, default: nowDefault(qr) },
        ],
        foreignKeys: [cascade('company_id', 'companies')],
        indices: [new TableIndex({ name: 'ix_webhook_events_record', columnNames: ['record_id'] })],
      }),
    );
    await qr.createTable(
      new Table({
        name: 'webhook_deliveries',
        columns: [
          idColumn(),
          uuidColumn(),
          { name: 'webhook_id', type: 'integer' },
          { name: 'event_id', type: 'integer' },
          { name: 'type', type: 'varchar', length: '40' },
          { name: 'record_id', type: 'varchar', length: '64', isNullable: true },
          { name: 'seq', type: 'integer', isNullable: true },
          { name: 'status', type: 'varchar', length: '16', default: "'pending'" },
          { name: 'attempts', type: 'integer', default: 0 },
          { name: 'next_attempt_at', type: datetime, isNullable: true },
          { name: 'claim', type: 'varchar', length: '36', isNullable: true },
          { name: 'last_attempt_at', type: datetime, isNullable: true },
          { name: 'last_status', type: 'integer', isNullable: true },
          { name: 'last_error', type: 'varchar', length: '300', isNullable: true },
          { name: 'last_ms', type: 'integer', isNullable: true },
          { name: 'last_body', type: 'varchar', length: '1024', isNullable: true },
          ...timestampColumns(qr),
        ],
        foreignKeys: [cascade('webhook_id', 'webhooks'), cascade('event_id', 'webhook_events')],
        indices: [
          new TableIndex({ name: 'ix_webhook_deliveries_due', columnNames: ['status', 'next_attempt_at'] }),
          new TableIndex({
            name: 'ix_webhook_deliveries_webhook',
            columnNames: ['webhook_id', 'created_at'],
          }),
          new TableIndex({
            name: 'ix_webhook_deliveries_record',
            columnNames: ['webhook_id', 'record_id', 'seq'],
          }),
        ],
      }),
    );
    await qr.createTable(
      new Table({
        name: 'webhook_attempts',
        columns: [
          idColumn(),
          { name: 'delivery_id', type: 'integer' },
          { name: 'at', type: datetime },
          { name: 'status', type: 'integer', isNullable: true },
          { name: 'error', type: 'varchar', length: '300', isNullable: true },
          { name: 'ms', type: 'integer' },
          { name: 'body', type: 'varchar', length: '1024', default: "''" },
        ],
        foreignKeys: [cascade('delivery_id', 'webhook_deliveries')],
        indices: [
          new TableIndex({ name: 'ix_webhook_attempts_delivery', columnNames: ['delivery_id'] }),
          new TableIndex({ name: 'ix_webhook_attempts_at', columnNames: ['at'] }),
        ],
      }),
    );
  }

  async down(qr: QueryRunner): Promise<void> {
    for (const table of ['webhook_attempts', 'webhook_deliveries', 'webhook_events', 'webhooks']) {
      await qr.dropTable(table);
    }
  }
}
