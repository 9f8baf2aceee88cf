import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { datetimeType, idColumn, nowDefault } from './portable';

/**
 * Change notices between processes on SQLite (ChangeNotices): a row per notice, read by the
 * other processes on the same file by id, pruned after a minute by its senders. PostgreSQL sends
 * its notices with pg_notify and leaves the table empty; it is created there too so that both
 * databases keep one schema. The id never goes back (AUTOINCREMENT on SQLite), even once every
 * row is pruned: readers remember the last id they read.
 */
export class ChangeNotices1764633600000 implements MigrationInterface {
  name = 'ChangeNotices1764633600000';

  async up(qr: QueryRunner): Promise<void> {
    await qr.createTable(
      new Table({
        name: 'change_notices',
        columns: [
          idColumn(),
          // PostgreSQL's channel names are identifiers: at most 63 bytes.
          { name: 'channel', type: 'varchar', length: '63' },
          { name: 'payload', type: 'text' },
          /** The sending application's random id, so that it does not hear itself. */
          { name: 'sender', type: 'varchar', length: '36' },
          { name: 'created_at', type: datetimeType(qr), default: nowDefault(qr) },
        ],
      }),
    );
  }

  async down(qr: QueryRunner): Promise<void> {
    await qr.dropTable('change_notices');
  }
}
