import { MigrationInterface, QueryRunner, Table, TableColumn } from 'typeorm';
import { binaryType, datetimeType, nowDefault, idColumn, timestampColumns, uuidColumn } from './portable';

/** Packages, billings and payment events, notifications, company usage, audit and relay settings. */
export class Commerce1763856000000 implements MigrationInterface {
  name = 'Commerce1763856000000';

  async up(qr: QueryRunner): Promise<void> {
    const dt = datetimeType(qr);

    await qr.addColumns('companies', [
      new TableColumn({ name: 'quota_warned_at80', type: dt, isNullable: true }),
      new TableColumn({ name: 'quota_warned_at100', type: dt, isNullable: true }),
      new TableColumn({
        name: 'script_token_hash',
        type: 'varchar',
        length: '64',
        isNullable: true,
        isUnique: true,
      }),
      new TableColumn({ name: 'script_token_cipher', type: 'varchar', length: '500', isNullable: true }),
      new TableColumn({ name: 'mailbox_suite', type: 'varchar', length: '32', default: "'none'" }),
      new TableColumn({ name: 'allowed_ips', type: 'text', default: "'[]'" }),
      new TableColumn({ name: 'crm_account_id', type: 'varchar', length: '64', isNullable: true }),
    ]);

    await qr.createTable(
      new Table({
        name: 'packages',
        columns: [
          idColumn(),
          uuidColumn(),
          { name: 'name', type: 'varchar', length: '100', isUnique: true },
          { name: 'description', type: 'varchar', length: '1000', isNullable: true },
          { name: 'quota', type: 'integer' },
          { name: 'price', type: 'bigint' },
          { name: 'currency', type: 'varchar', length: '3' },
          { name: 'duration_days', type: 'integer', default: 30 },
          { name: 'is_public', type: 'boolean', default: true },
          { name: 'is_active', type: 'boolean', default: true },
          ...timestampColumns(qr),
        ],
      }),
    );

    await qr.createTable(
      new Table({
        name: 'billings',
        columns: [
          idColumn(),
          uuidColumn(),
          { name: 'number', type: 'varchar', length: '32', isUnique: true },
          { name: 'company_id', type: 'integer' },
          { name: 'package_id', type: 'integer' },
          { name: 'package_name', type: 'varchar', length: '100' },
          { name: 'package_quota', type: 'integer' },
          { name: 'package_duration_days', type: 'integer' },
          { name: 'amount', type: 'bigint' },
          { name: 'currency', type: 'varchar', length: '3' },
          { name: 'method', type: 'varchar', length: '16' },
          { name: 'status', type: 'varchar', length: '16', default: "'pending'" },
          { name: 'external_id', type: 'varchar', length: '64', isUnique: true },
          { name: 'gateway_invoice_id', type: 'varchar', length: '64', isNullable: true },
          { name: 'payment_url', type: 'varchar', length: '1000', isNullable: true },
          { name: 'gateway_expires_at', type: dt, isNullable: true },
          { name: 'expires_at', type: dt },
          { name: 'paid_at', type: dt, isNullable: true },
          { name: 'paid_amount', type: 'bigint', isNullable: true },
          { name: 'payment_method', type: 'varchar', length: '64', isNullable: true },
          { name: 'payment_channel', type: 'varchar', length: '64', isNullable: true },
          { name: 'proof_file_name', type: 'varchar', length: '255', isNullable: true },
          { name: 'proof_file_type', type: 'varchar', length: '64', isNullable: true },
          { name: 'proof_file_size', type: 'integer', isNullable: true },
          { name: 'proof_content', type: binaryType(qr), isNullable: true },
          { name: 'proof_uploaded_at', type: dt, isNullable: true },
          { name: 'rejected_reason', type: 'varchar', length: '1000', isNullable: true },
          { name: 'review_note', type: 'varchar', length: '1000', isNullable: true },
          { name: 'refund_reason', type: 'varchar', length: '1000', isNullable: true },
          { name: 'reviewed_by_admin_uuid', type: 'varchar', length: '36', isNullable: true },
          { name: 'reminder_sent_at', type: dt, isNullable: true },
          ...timestampColumns(qr),
        ],
        foreignKeys: [
          {
            columnNames: ['company_id'],
            referencedTableName: 'companies',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
          { columnNames: ['package_id'], referencedTableName: 'packages', referencedColumnNames: ['id'] },
        ],
        indices: [
          { columnNames: ['company_id', 'status'] },
          { columnNames: ['status', 'expires_at'] },
          { columnNames: ['package_id'] },
          { columnNames: ['gateway_invoice_id'] },
        ],
      }),
    );

    await qr.createTable(
      new Table({
        name: 'payment_events',
        columns: [
          idColumn(),
          { name: 'event_key', type: 'varchar', length: '200', isUnique: true },
          { name: 'webhook_id', type: 'varchar', length: '200', isNullable: true, isUnique: true },
          { name: 'external_id', type: 'varchar', length: '64', isNullable: true },
          { name: 'gateway_invoice_id', type: 'varchar', length: '64', isNullable: true },
          { name: 'status', type: 'varchar', length: '32', isNullable: true },
          { name: 'raw', type: 'text' },
          { name: 'outcome', type: 'varchar', length: '16', isNullable: true },
          { name: 'billing_uuid', type: 'varchar', length: '36', isNullable: true },
          { name: 'attempts', type: 'integer', default: 0 },
          { name: 'last_error', type: 'varchar', length: '1000', isNullable: true },
          { name: 'applied_at', type: dt, isNullable: true },
          { name: 'created_at', type: dt, default: nowDefault(qr) },
        ],
        indices: [{ columnNames: ['outcome'] }],
      }),
    );

    await qr.createTable(
      new Table({
        name: 'notifications',
        columns: [
          idColumn(),
          uuidColumn(),
          { name: 'user_id', type: 'integer', isNullable: true },
          { name: 'admin_id', type: 'integer', isNullable: true },
          { name: 'type', type: 'varchar', length: '40' },
          { name: 'title', type: 'varchar', length: '200' },
          { name: 'body', type: 'varchar', length: '5000' },
          { name: 'data', type: 'text', isNullable: true },
          { name: 'read_at', type: dt, isNullable: true },
          ...timestampColumns(qr),
        ],
        foreignKeys: [
          {
            columnNames: ['user_id'],
            referencedTableName: 'users',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
          {
            columnNames: ['admin_id'],
            referencedTableName: 'admins',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
        ],
        indices: [{ columnNames: ['user_id', 'read_at'] }, { columnNames: ['admin_id', 'read_at'] }],
      }),
    );

    await qr.createTable(
      new Table({
        name: 'company_usage_days',
        columns: [
          { name: 'company_id', type: 'integer', isPrimary: true },
          { name: 'day', type: 'varchar', length: '10', isPrimary: true },
          { name: 'count', type: 'integer', default: 0 },
        ],
        foreignKeys: [
          {
            columnNames: ['company_id'],
            referencedTableName: 'companies',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
        ],
      }),
    );

    await qr.createTable(
      new Table({
        name: 'company_audit_events',
        columns: [
          idColumn(),
          { name: 'company_id', type: 'integer' },
          { name: 'admin_uuid', type: 'varchar', length: '36', isNullable: true },
          { name: 'action', type: 'varchar', length: '64' },
          { name: 'detail', type: 'text', isNullable: true },
          { name: 'created_at', type: dt, default: nowDefault(qr) },
        ],
        foreignKeys: [
          {
            columnNames: ['company_id'],
            referencedTableName: 'companies',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
        ],
        indices: [{ columnNames: ['company_id'] }],
      }),
    );
  }

  async down(qr: QueryRunner): Promise<void> {
    for (const table of [
      'company_audit_events',
      'company_usage_days',
      'notifications',
      'payment_events',
      'billings',
      'packages',
    ]) {
      await qr.dropTable(table);
    }
    for (const column of [
      'crm_account_id',
      'allowed_ips',
      'mailbox_suite',
      'script_token_cipher',
      'script_token_hash',
      'quota_warned_at100',
      'quota_warned_at80',
    ]) {
      await qr.dropColumn('companies', column);
    }
  }
}
