import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { datetimeType, idColumn, nowDefault } from './portable';

/**
 * Delivery data (integrations.md "Log shipper", "Mail provider delivery events", "Clean-log
 * index"): the log batches as received, what Postfix said per queue and per delivery attempt,
 * the records already counted against a quota, the mail-provider events, and the SQL clean-log
 * index.
 */
export class DeliveryData1764288000000 implements MigrationInterface {
  name = 'DeliveryData1764288000000';

  async up(qr: QueryRunner): Promise<void> {
    const dt = datetimeType(qr);
    const inboundColumns = [
      idColumn(),
      { name: 'event_key', type: 'varchar', length: '200', isUnique: true },
      { name: 'webhook_id', type: 'varchar', length: '200', isNullable: true, isUnique: true },
      { name: 'raw', type: 'text' },
      { name: 'outcome', type: 'varchar', length: '16', isNullable: true },
      { name: 'attempts', type: 'integer', default: 0 },
      { name: 'last_error', type: 'varchar', length: '1000', isNullable: true },
      { name: 'applied_at', type: dt, isNullable: true },
      { name: 'created_at', type: dt, default: nowDefault(qr) },
    ];

    await qr.createTable(
      new Table({
        name: 'log_batches',
        columns: [
          ...inboundColumns,
          { name: 'content_type', type: 'varchar', length: '100' },
          { name: 'records', type: 'integer', isNullable: true },
        ],
        indices: [{ name: 'ix_log_batches_outcome', columnNames: ['outcome', 'id'] }],
      }),
    );

    await qr.createTable(
      new Table({
        name: 'postfix_queues',
        columns: [
          idColumn(),
          { name: 'host', type: 'varchar', length: '255' },
          { name: 'queue_id', type: 'varchar', length: '64' },
          { name: 'client_host', type: 'varchar', length: '255', isNullable: true },
          { name: 'client_ip', type: 'varchar', length: '64', isNullable: true },
          { name: 'sasl_username', type: 'varchar', length: '255', isNullable: true },
          { name: 'message_id', type: 'varchar', length: '500', isNullable: true },
          { name: 'sender', type: 'varchar', length: '320', isNullable: true },
          { name: 'size', type: 'integer', isNullable: true },
          { name: 'expired_at', type: dt, isNullable: true },
          { name: 'removed_at', type: dt, isNullable: true },
          { name: 'first_seen_at', type: dt },
        ],
        indices: [
          { name: 'uq_postfix_queues_host_queue', columnNames: ['host', 'queue_id'], isUnique: true },
        ],
      }),
    );

    await qr.createTable(
      new Table({
        name: 'postfix_deliveries',
        columns: [
          idColumn(),
          { name: 'line_key', type: 'varchar', length: '64', isUnique: true },
          { name: 'host', type: 'varchar', length: '255' },
          // Null for a NOQUEUE reject: the message never had a queue.
          { name: 'queue_id', type: 'varchar', length: '64', isNullable: true },
          { name: 'recipient', type: 'varchar', length: '320' },
          { name: 'orig_to', type: 'varchar', length: '320', isNullable: true },
          { name: 'at', type: dt },
          { name: 'status', type: 'varchar', length: '16' },
          { name: 'dsn', type: 'varchar', length: '16', isNullable: true },
          { name: 'relay', type: 'varchar', length: '300', isNullable: true },
          { name: 'delay', type: 'real', isNullable: true },
          { name: 'response', type: 'text', isNullable: true },
          { name: 'remote_queue_id', type: 'varchar', length: '200', isNullable: true },
          // NOQUEUE rejects only: what the line itself says of the message.
          { name: 'sender', type: 'varchar', length: '320', isNullable: true },
          { name: 'client_ip', type: 'varchar', length: '64', isNullable: true },
        ],
        indices: [{ name: 'ix_postfix_deliveries_queue', columnNames: ['host', 'queue_id'] }],
      }),
    );

    await qr.createTable(
      new Table({
        name: 'quota_counted_records',
        columns: [
          { name: 'record_id', type: 'varchar', length: '64', isPrimary: true },
          { name: 'company_id', type: 'integer' },
          { name: 'counted_at', type: dt, default: nowDefault(qr) },
        ],
      }),
    );

    await qr.createTable(
      new Table({
        name: 'provider_events',
        columns: [
          idColumn(),
          { name: 'event_key', type: 'varchar', length: '200', isUnique: true },
          { name: 'provider', type: 'varchar', length: '16' },
          { name: 'type', type: 'varchar', length: '16' },
          { name: 'recipient', type: 'varchar', length: '320' },
          { name: 'message_id', type: 'varchar', length: '500', isNullable: true },
          { name: 'provider_message_id', type: 'varchar', length: '200', isNullable: true },
          { name: 'at', type: dt },
          { name: 'bounce_kind', type: 'varchar', length: '8', isNullable: true },
          { name: 'dsn', type: 'varchar', length: '16', isNullable: true },
          { name: 'reason', type: 'varchar', length: '1000', isNullable: true },
          { name: 'raw', type: 'text' },
          // The clean record it was applied to; null while its message is not known yet.
          { name: 'record_id', type: 'varchar', length: '64', isNullable: true },
          // Why applying it failed (for the retry job); null once applied or still waiting.
          { name: 'apply_error', type: 'varchar', length: '1000', isNullable: true },
          { name: 'created_at', type: dt, default: nowDefault(qr) },
        ],
        indices: [
          { name: 'ix_provider_events_recipient', columnNames: ['recipient'] },
          { name: 'ix_provider_events_record', columnNames: ['record_id'] },
          { name: 'ix_provider_events_apply_error', columnNames: ['apply_error'] },
        ],
      }),
    );

    await qr.createTable(
      new Table({
        name: 'clean_logs',
        columns: [
          { name: 'id', type: 'varchar', length: '64', isPrimary: true },
          { name: 'company_id', type: 'integer', isNullable: true },
          { name: 'company_uuid', type: 'varchar', length: '36', isNullable: true },
          { name: 'host', type: 'varchar', length: '255' },
          { name: 'queue_id', type: 'varchar', length: '64', isNullable: true },
          { name: 'message_id', type: 'varchar', length: '500', isNullable: true },
          { name: 'sender', type: 'varchar', length: '320' },
          { name: 'sender_domain', type: 'varchar', length: '255', isNullable: true },
          { name: 'recipient', type: 'varchar', length: '320' },
          { name: 'orig_to', type: 'varchar', length: '320', isNullable: true },
          { name: 'status', type: 'varchar', length: '16' },
          { name: 'dsn', type: 'varchar', length: '16', isNullable: true },
          { name: 'response', type: 'text', isNullable: true },
          { name: 'relay', type: 'varchar', length: '300', isNullable: true },
          { name: 'delay', type: 'real', isNullable: true },
          { name: 'size', type: 'integer', isNullable: true },
          { name: 'client_ip', type: 'varchar', length: '64', isNullable: true },
          { name: 'sasl_username', type: 'varchar', length: '255', isNullable: true },
          { name: 'remote_queue_id', type: 'varchar', length: '200', isNullable: true },
          { name: 'attempts', type: 'integer', default: 0 },
          { name: 'opened', type: 'boolean', default: false },
          { name: 'clicked', type: 'boolean', default: false },
          { name: 'first_seen_at', type: dt },
          { name: 'last_event_at', type: dt },
          { name: 'events', type: 'text' },
        ],
        indices: [
          // With the id: pages are ordered by (last_event_at, id), so the index serves them without a sort.
          { name: 'ix_clean_logs_company_last', columnNames: ['company_id', 'last_event_at', 'id'] },
          { name: 'ix_clean_logs_company_recipient', columnNames: ['company_id', 'recipient'] },
          { name: 'ix_clean_logs_last', columnNames: ['last_event_at', 'id'] },
          { name: 'ix_clean_logs_message_id', columnNames: ['message_id'] },
          { name: 'ix_clean_logs_queue_id', columnNames: ['queue_id'] },
          { name: 'ix_clean_logs_remote_queue_id', columnNames: ['remote_queue_id'] },
        ],
      }),
    );

    // The SQL index's daily roll-up: records by (company, day of last event, sender domain, status),
    // kept in step with every record write, so summaries of whole days read a few rows a day.
    await qr.createTable(
      new Table({
        name: 'clean_log_daily',
        columns: [
          // 0 for records of no known company, '' for the null sender: the key has no NULLs.
          { name: 'company_id', type: 'integer', isPrimary: true },
          { name: 'day', type: 'varchar', length: '10', isPrimary: true },
          { name: 'sender_domain', type: 'varchar', length: '255', isPrimary: true },
          { name: 'status', type: 'varchar', length: '16', isPrimary: true },
          { name: 'records', type: 'integer', default: 0 },
          { name: 'opened', type: 'integer', default: 0 },
          { name: 'clicked', type: 'integer', default: 0 },
        ],
        indices: [{ name: 'ix_clean_log_daily_day', columnNames: ['day'] }],
      }),
    );
  }

  async down(qr: QueryRunner): Promise<void> {
    for (const table of [
      'clean_log_daily',
      'clean_logs',
      'provider_events',
      'quota_counted_records',
      'postfix_deliveries',
      'postfix_queues',
      'log_batches',
    ]) {
      await qr.dropTable(table);
    }
  }
}
