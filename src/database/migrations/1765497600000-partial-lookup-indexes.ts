import { MigrationInterface, QueryRunner, TableIndex } from 'typeorm';

/**
 * The lookup indexes of columns a record or a line often lacks hold only the rows that have a
 * value: every query on them compares the column with `=` or `IN`, which already leaves NULL
 * out, and an index entry is most of what storing a row costs (a clean record's seven entries
 * are nine tenths of its insert). A `NOQUEUE` reject has no queue id nor Message-ID, and a
 * delivery whose next hop answered without "queued as" no remote queue id.
 */
const PARTIAL: Array<{ table: string; name: string; columnNames: string[]; column: string }> = [
  {
    table: 'clean_logs',
    name: 'ix_clean_logs_message_id',
    columnNames: ['message_id'],
    column: 'message_id',
  },
  { table: 'clean_logs', name: 'ix_clean_logs_queue_id', columnNames: ['queue_id'], column: 'queue_id' },
  {
    table: 'clean_logs',
    name: 'ix_clean_logs_remote_queue_id',
    columnNames: ['remote_queue_id'],
    column: 'remote_queue_id',
  },
  {
    table: 'postfix_deliveries',
    name: 'ix_postfix_deliveries_queue',
    columnNames: ['host', 'queue_id'],
    column: 'queue_id',
  },
];

export class PartialLookupIndexes1765497600000 implements MigrationInterface {
  name = 'PartialLookupIndexes1765497600000';

  async up(qr: QueryRunner): Promise<void> {
    for (const { table, name, columnNames, column } of PARTIAL) {
      await qr.dropIndex(table, name);
      await qr.createIndex(table, new TableIndex({ name, columnNames, where: `${column} IS NOT NULL` }));
    }
  }

  async down(qr: QueryRunner): Promise<void> {
    for (const { table, name, columnNames } of PARTIAL) {
      await qr.dropIndex(table, name);
      await qr.createIndex(table, new TableIndex({ name, columnNames }));
    }
  }
}
