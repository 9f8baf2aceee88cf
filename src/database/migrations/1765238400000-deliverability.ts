import { MigrationInterface, QueryRunner, Table, TableColumn, TableForeignKey, TableIndex } from 'typeorm';
import { datetimeType, idColumn, timestampColumns, uuidColumn } from './portable';

/**
 * Deliverability (deliverability.md): each clean record's mailbox provider and bounce class; the
 * hourly roll-up the provider and bounce reports and the alerts read; the latest reply of each
 * bounce rule per company (the reports' samples); and the alerts. Records built before this
 * have no provider: the `deliverability-alerts` job classifies them chunk by chunk (the partial
 * index finds the rest).
 */
export class Deliverability1765238400000 implements MigrationInterface {
  name = 'Deliverability1765238400000';

  async up(qr: QueryRunner): Promise<void> {
    const datetime = datetimeType(qr);
    await qr.addColumns('clean_logs', [
      new TableColumn({ name: 'provider', type: 'varchar', length: '16', isNullable: true }),
      new TableColumn({ name: 'bounce_type', type: 'varchar', length: '8', isNullable: true }),
      new TableColumn({ name: 'bounce_category', type: 'varchar', length: '32', isNullable: true }),
      new TableColumn({ name: 'bounce_rule', type: 'varchar', length: '64', isNullable: true }),
    ]);
    await qr.createIndex(
      'clean_logs',
      new TableIndex({ name: 'ix_clean_logs_unclassified', columnNames: ['id'], where: 'provider IS NULL' }),
    );
    await qr.createTable(
      new Table({
        name: 'deliverability_hourly',
        columns: [
          { name: 'company_id', type: 'integer', isPrimary: true },
          { name: 'hour', type: 'varchar', length: '13', isPrimary: true },
          { name: 'sender_domain', type: 'varchar', length: '255', isPrimary: true },
          { name: 'provider', type: 'varchar', length: '16', isPrimary: true },
          { name: 'status', type: 'varchar', length: '16', isPrimary: true },
          { name: 'bounce_type', type: 'varchar', length: '8', isPrimary: true },
          { name: 'bounce_category', type: 'varchar', length: '32', isPrimary: true },
          { name: 'bounce_rule', type: 'varchar', length: '64', isPrimary: true },
          { name: 'records', type: 'integer', default: 0 },
        ],
        indices: [{ name: 'ix_deliverability_hourly_hour', columnNames: ['hour'] }],
      }),
    );
    await qr.createTable(
      new Table({
        name: 'bounce_samples',
        columns: [
          { name: 'company_id', type: 'integer', isPrimary: true },
          { name: 'rule', type: 'varchar', length: '64', isPrimary: true },
          { name: 'response', type: 'varchar', length: '500' },
          { name: 'at', type: datetime },
        ],
      }),
    );
    await qr.createTable(
      new Table({
        name: 'deliverability_alerts',
        columns: [
          idColumn(),
          uuidColumn(),
          { name: 'company_id', type: 'integer' },
          { name: 'provider', type: 'varchar', length: '16' },
          { name: 'kind', type: 'varchar', length: '32' },
          { name: 'level', type: 'varchar', length: '16' },
          { name: 'value', type: 'real' },
          { name: 'threshold', type: 'real' },
          { name: 'opened_at', type: datetime },
          { name: 'resolved_at', type: datetime, isNullable: true },
          { name: 'last_above_at', type: datetime },
          { name: 'sample_response', type: 'varchar', length: '500', isNullable: true },
          { name: 'sample_rule', type: 'varchar', length: '64', isNullable: true },
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
        indices: [
          new TableIndex({
            name: 'ix_deliverability_alerts_company',
            columnNames: ['company_id', 'opened_at'],
          }),
          new TableIndex({
            name: 'ix_deliverability_alerts_open',
            columnNames: ['company_id', 'provider', 'kind'],
            isUnique: true,
            where: 'resolved_at IS NULL',
          }),
        ],
      }),
    );
  }

  async down(qr: QueryRunner): Promise<void> {
    await qr.dropTable('deliverability_alerts');
    await qr.dropTable('bounce_samples');
    await qr.dropTable('deliverability_hourly');
    await qr.dropIndex('clean_logs', 'ix_clean_logs_unclassified');
    for (const column of ['bounce_rule', 'bounce_category', 'bounce_type', 'provider']) {
      await qr.dropColumn('clean_logs', column);
    }
  }
}
