import { MigrationInterface, QueryRunner, Table, TableColumn } from 'typeorm';
import { datetimeType, idColumn, nowDefault, timestampColumns } from './portable';

/**
 * The M365 distribution group a company's transport rule is scoped to; the CRM connection
 * (one row), the single-use OAuth states and the outbox of companies to upsert into the CRM.
 */
export class MailboxSuitesAndCrm1764374400000 implements MigrationInterface {
  name = 'MailboxSuitesAndCrm1764374400000';

  async up(qr: QueryRunner): Promise<void> {
    await qr.addColumn(
      'companies',
      new TableColumn({ name: 'mailbox_group_name', type: 'varchar', length: '256', isNullable: true }),
    );

    await qr.createTable(
      new Table({
        name: 'crm_connections',
        columns: [
          // Always 1: the service talks to one CRM.
          { name: 'id', type: 'integer', isPrimary: true },
          { name: 'provider', type: 'varchar', length: '32' },
          { name: 'access_token_cipher', type: 'text' },
          { name: 'refresh_token_cipher', type: 'text', isNullable: true },
          { name: 'expires_at', type: datetimeType(qr) },
          { name: 'api_domain', type: 'varchar', length: '255' },
          { name: 'connected_by_admin_uuid', type: 'varchar', length: '36' },
          { name: 'connected_at', type: datetimeType(qr) },
          ...timestampColumns(qr),
        ],
      }),
    );

    await qr.createTable(
      new Table({
        name: 'crm_oauth_states',
        columns: [
          { name: 'nonce', type: 'varchar', length: '64', isPrimary: true },
          { name: 'admin_uuid', type: 'varchar', length: '36' },
          { name: 'expires_at', type: datetimeType(qr) },
          { name: 'created_at', type: datetimeType(qr), default: nowDefault(qr) },
        ],
      }),
    );

    await qr.createTable(
      new Table({
        name: 'crm_outbox',
        columns: [
          idColumn(),
          { name: 'company_id', type: 'integer', isUnique: true },
          { name: 'attempts', type: 'integer', default: 0 },
          { name: 'next_attempt_at', type: datetimeType(qr), default: nowDefault(qr) },
          { name: 'last_error', type: 'varchar', length: '500', isNullable: true },
          { name: 'synced_at', type: datetimeType(qr), isNullable: true },
          ...timestampColumns(qr),
        ],
        foreignKeys: [
          {
            columnNames: ['company_id'],
            referencedTableName: 'companies',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
        ],
        indices: [
          { name: 'ix_crm_outbox_due', columnNames: ['next_attempt_at'], where: 'synced_at IS NULL' },
        ],
      }),
    );
  }

  async down(qr: QueryRunner): Promise<void> {
    await qr.dropTable('crm_outbox');
    await qr.dropTable('crm_oauth_states');
    await qr.dropTable('crm_connections');
    await qr.dropColumn('companies', 'mailbox_group_name');
  }
}
