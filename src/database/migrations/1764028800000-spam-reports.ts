import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { datetimeType, idColumn, timestampColumns, uuidColumn } from './portable';

/** Spam reports about companies' mail (POST /api/v1/spamming-mail). */
export class SpamReports1764028800000 implements MigrationInterface {
  name = 'SpamReports1764028800000';

  async up(qr: QueryRunner): Promise<void> {
    await qr.createTable(
      new Table({
        name: 'spam_reports',
        columns: [
          idColumn(),
          uuidColumn(),
          { name: 'company_id', type: 'integer' },
          { name: 'reported_by', type: 'varchar', length: '64' },
          { name: 'message_id', type: 'varchar', length: '998', isNullable: true },
          { name: 'recipient', type: 'varchar', length: '320', isNullable: true },
          { name: 'reason', type: 'varchar', length: '500', isNullable: true },
          { name: 'score', type: 'double precision', isNullable: true },
          { name: 'received_at', type: datetimeType(qr) },
          { name: 'dedupe_key', type: 'varchar', length: '64', isNullable: true, isUnique: true },
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
        indices: [{ name: 'ix_spam_reports_company_received', columnNames: ['company_id', 'received_at'] }],
      }),
    );
  }

  async down(qr: QueryRunner): Promise<void> {
    await qr.dropTable('spam_reports');
  }
}
