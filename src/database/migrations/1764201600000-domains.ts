import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { datetimeType, idColumn, timestampColumns, uuidColumn } from './portable';

/** Sender domains, with their DNS records and DKIM keys. */
export class Domains1764201600000 implements MigrationInterface {
  name = 'Domains1764201600000';

  async up(qr: QueryRunner): Promise<void> {
    await qr.createTable(
      new Table({
        name: 'domains',
        columns: [
          idColumn(),
          uuidColumn(),
          { name: 'company_id', type: 'integer' },
          { name: 'name', type: 'varchar', length: '253' },
          { name: 'status', type: 'varchar', length: '16', default: "'pending'" },
          { name: 'verification_token', type: 'varchar', length: '64' },
          { name: 'dkim_selector', type: 'varchar', length: '32' },
          { name: 'dkim_public_key', type: 'text' },
          { name: 'dkim_private_key', type: 'text' },
          { name: 'records', type: 'text', default: "'[]'" },
          { name: 'last_checked_at', type: datetimeType(qr), isNullable: true },
          { name: 'verified_at', type: datetimeType(qr), isNullable: true },
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
          { name: 'uq_domains_company_name', columnNames: ['company_id', 'name'], isUnique: true },
          // A name is verified by one company at most, even when two verify at the same moment;
          // the relay's lookup of a verified name is this index too.
          {
            name: 'uq_domains_verified_name',
            columnNames: ['name'],
            isUnique: true,
            where: "status = 'verified'",
          },
          { name: 'ix_domains_status', columnNames: ['status'] },
        ],
      }),
    );
  }

  async down(qr: QueryRunner): Promise<void> {
    await qr.dropTable('domains');
  }
}
