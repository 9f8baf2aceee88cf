import { MigrationInterface, QueryRunner, TableColumn } from 'typeorm';
import { datetimeType } from './portable';

/**
 * When each user's and admin's password last changed (change, reset, accepted invitation):
 * a refresh token issued before that moment is refused (auth.md, Tokens). Null until the
 * first change, so existing rows keep their refresh tokens.
 */
export class PasswordChangedAt1764115200000 implements MigrationInterface {
  name = 'PasswordChangedAt1764115200000';

  async up(qr: QueryRunner): Promise<void> {
    for (const table of ['users', 'admins']) {
      await qr.addColumn(
        table,
        new TableColumn({ name: 'password_changed_at', type: datetimeType(qr), isNullable: true }),
      );
    }
  }

  async down(qr: QueryRunner): Promise<void> {
    for (const table of ['admins', 'users']) await qr.dropColumn(table, 'password_changed_at');
  }
}
