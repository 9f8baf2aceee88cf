import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { datetimeType, idColumn, timestampColumns, uuidColumn } from './portable';

/** Suppression lists: one per company, and the global one (company_id null). */
export class Suppression1763942400000 implements MigrationInterface {
  name = 'Suppression1763942400000';

  async up(qr: QueryRunner): Promise<void> {
    await qr.createTable(
      new Table({
        name: 'suppression_entries',
        columns: [
          idColumn(),
          uuidColumn(),
          { name: 'company_id', type: 'integer', isNullable: true },
          { name: 'email', type: 'varchar', length: '320' },
          { name: 'reason', type: 'varchar', length: '16' },
          { name: 'source', type: 'varchar', length: '16' },
          { name: 'detail', type: 'varchar', length: '500', isNullable: true },
          { name: 'expires_at', type: datetimeType(qr), isNullable: true },
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
        // NULLs are distinct in a unique index, so the global list has an index of its own.
        indices: [
          {
            name: 'uq_suppression_company_email',
            columnNames: ['company_id', 'email'],
            isUnique: true,
            where: 'company_id IS NOT NULL',
          },
          {
            name: 'uq_suppression_global_email',
            columnNames: ['email'],
            isUnique: true,
            where: 'company_id IS NULL',
          },
          { name: 'ix_suppression_company_created', columnNames: ['company_id', 'created_at'] },
        ],
      }),
    );
  }

  async down(qr: QueryRunner): Promise<void> {
    await qr.dropTable('suppression_entries');
  }
}
