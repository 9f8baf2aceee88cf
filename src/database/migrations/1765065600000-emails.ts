import { MigrationInterface, QueryRunner, Table, TableColumn, TableForeignKey, TableIndex } from 'typeorm';
import { datetimeType, idColumn, nowDefault, timestampColumns, uuidColumn } from './portable';

/**
 * Sending by HTTP (platform.md "Sending by HTTP"): each message sent through /api/v1/emails,
 * kept with its content until the relay accepted it; the Idempotency-Keys of the last 24 hours;
 * and the message a clean record belongs to (`clean_logs.email_id`).
 */
export class Emails1765065600000 implements MigrationInterface {
  name = 'Emails1765065600000';

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
        name: 'emails',
        columns: [
          idColumn(),
          uuidColumn(),
          { name: 'company_id', type: 'integer' },
          { name: 'api_key_id', type: 'integer', isNullable: true },
          { name: 'kind', type: 'varchar', length: '8' },
          { name: 'message_id', type: 'varchar', length: '500' },
          { name: 'envelope_from', type: 'varchar', length: '320' },
          { name: 'from_header', type: 'varchar', length: '998' },
          { name: 'to_addresses', type: 'text' },
          { name: 'cc_addresses', type: 'text' },
          { name: 'bcc_addresses', type: 'text' },
          { name: 'reply_to', type: 'varchar', length: '998', isNullable: true },
          { name: 'subject', type: 'varchar', length: '998', isNullable: true },
          { name: 'status', type: 'varchar', length: '16' },
          { name: 'accepted', type: 'text' },
          { name: 'rejected', type: 'text' },
          { name: 'tags', type: 'text' },
          { name: 'metadata', type: 'text' },
          { name: 'content', type: 'text', isNullable: true },
          { name: 'scheduled_at', type: datetime, isNullable: true },
          { name: 'next_attempt_at', type: datetime, isNullable: true },
          { name: 'attempts', type: 'integer', default: 0 },
          { name: 'claim', type: 'varchar', length: '36', isNullable: true },
          { name: 'last_error', type: 'varchar', length: '500', isNullable: true },
          { name: 'submitted_at', type: datetime, isNullable: true },
          { name: 'queue_id', type: 'varchar', length: '64', isNullable: true },
          { name: 'relay_response', type: 'varchar', length: '500', isNullable: true },
          ...timestampColumns(qr),
        ],
        foreignKeys: [
          cascade('company_id', 'companies'),
          new TableForeignKey({
            columnNames: ['api_key_id'],
            referencedTableName: 'api_keys',
            referencedColumnNames: ['id'],
            onDelete: 'SET NULL',
          }),
        ],
        indices: [
          new TableIndex({ name: 'ix_emails_company_created', columnNames: ['company_id', 'created_at'] }),
          new TableIndex({ name: 'ix_emails_message', columnNames: ['message_id'] }),
          new TableIndex({
            name: 'ix_emails_waiting',
            columnNames: ['next_attempt_at', 'id'],
            where: "status IN ('queued', 'scheduled')",
          }),
        ],
      }),
    );
    await qr.createTable(
      new Table({
        name: 'idempotency_keys',
        columns: [
          idColumn(),
          { name: 'company_id', type: 'integer' },
          { name: 'key', type: 'varchar', length: '256' },
          { name: 'request_hash', type: 'varchar', length: '64' },
          { name: 'response_status', type: 'integer', isNullable: true },
          { name: 'response', type: 'text', isNullable: true },
          { name: 'created_at', type: datetime, default: nowDefault(qr) },
        ],
        foreignKeys: [cascade('company_id', 'companies')],
        indices: [
          new TableIndex({
            name: 'uq_idempotency_company_key',
            columnNames: ['company_id', 'key'],
            isUnique: true,
          }),
          new TableIndex({ name: 'ix_idempotency_created', columnNames: ['created_at'] }),
        ],
      }),
    );
    await qr.addColumn(
      'clean_logs',
      new TableColumn({ name: 'email_id', type: 'varchar', length: '36', isNullable: true }),
    );
  }

  async down(qr: QueryRunner): Promise<void> {
    await qr.dropColumn('clean_logs', 'email_id');
    await qr.dropTable('idempotency_keys');
    await qr.dropTable('emails');
  }
}
