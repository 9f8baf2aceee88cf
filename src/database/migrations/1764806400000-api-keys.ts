import { MigrationInterface, QueryRunner, Table, TableForeignKey, TableIndex } from 'typeorm';
import { datetimeType, idColumn, timestampColumns, uuidColumn } from './portable';

/** Customers' API keys (platform.md "API keys"): found by the SHA-256 digest of the key. */
export class ApiKeys1764806400000 implements MigrationInterface {
  name = 'ApiKeys1764806400000';

  async up(qr: QueryRunner): Promise<void> {
    await qr.createTable(
      new Table({
        name: 'api_keys',
        columns: [
          idColumn(),
          uuidColumn(),
          { name: 'company_id', type: 'integer' },
          { name: 'name', type: 'varchar', length: '100' },
          { name: 'scope', type: 'varchar', length: '16' },
          { name: 'domains', type: 'text', default: "'[]'" },
          { name: 'allowed_ips', type: 'text', default: "'[]'" },
          { name: 'digest', type: 'varchar', length: '64', isUnique: true },
          { name: 'hint', type: 'varchar', length: '12' },
          { name: 'expires_at', type: datetimeType(qr), isNullable: true },
          { name: 'last_used_at', type: datetimeType(qr), isNullable: true },
          { name: 'last_used_ip', type: 'varchar', length: '45', isNullable: true },
          { name: 'created_by_user_uuid', type: 'varchar', length: '36', isNullable: true },
          { name: 'revoked_at', type: datetimeType(qr), isNullable: true },
          ...timestampColumns(qr),
        ],
        foreignKeys: [
          new TableForeignKey({
            columnNames: ['company_id'],
            referencedTableName: 'companies',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          }),
        ],
        indices: [new TableIndex({ name: 'ix_api_keys_company', columnNames: ['company_id', 'revoked_at'] })],
      }),
    );
  }

  async down(qr: QueryRunner): Promise<void> {
    await qr.dropTable('api_keys');
  }
}
