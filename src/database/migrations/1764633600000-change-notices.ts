import { MigrationInterface, QueryRunner } from 'typeorm';

/** Change notices between processes on SQLite. */
export class ChangeNotices1764633600000 implements MigrationInterface {
  name = 'ChangeNotices1764633600000';

  async up(_qr: QueryRunner): Promise<void> {}

  async down(_qr: QueryRunner): Promise<void> {}
}
