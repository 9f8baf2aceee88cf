import { MigrationInterface, QueryRunner, Table, TableIndex } from 'typeorm';
import { datetimeType, nowDefault, idColumn, timestampColumns, uuidColumn } from './portable';

/** Admins and roles (seeded), companies, users and contacts, the refresh-token blacklist. */
export class Foundation1763769600000 implements MigrationInterface {
  name = 'Foundation1763769600000';

  async up(qr: QueryRunner): Promise<void> {
    const dt = datetimeType(qr);

    await qr.createTable(
      new Table({
        name: 'admin_roles',
        columns: [
          { name: 'id', type: 'integer', isPrimary: true },
          { name: 'name', type: 'varchar', length: '32', isUnique: true },
        ],
      }),
    );
    await qr.manager
      .createQueryBuilder()
      .insert()
      .into('admin_roles', ['id', 'name'])
      .values([
        { id: 1, name: 'superAdmin' },
        { id: 2, name: 'admin' },
        { id: 3, name: 'accounting' },
      ])
      .execute();

    await qr.createTable(
      new Table({
        name: 'admins',
        columns: [
          idColumn(),
          uuidColumn(),
          { name: 'email', type: 'varchar', length: '254', isUnique: true },
          { name: 'full_name', type: 'varchar', length: '200' },
          { name: 'password_hash', type: 'varchar', length: '255' },
          { name: 'role_id', type: 'integer' },
          { name: 'is_active', type: 'boolean', default: true },
          { name: 'last_login_at', type: dt, isNullable: true },
          { name: 'password_version', type: 'integer', default: 0 },
          ...timestampColumns(qr),
        ],
        foreignKeys: [
          { columnNames: ['role_id'], referencedTableName: 'admin_roles', referencedColumnNames: ['id'] },
        ],
        indices: [{ columnNames: ['role_id'] }],
      }),
    );

    await qr.createTable(
      new Table({
        name: 'companies',
        columns: [
          idColumn(),
          uuidColumn(),
          { name: 'name', type: 'varchar', length: '200' },
          { name: 'legal_name', type: 'varchar', length: '200', isNullable: true },
          { name: 'tax_id', type: 'varchar', length: '64', isNullable: true },
          { name: 'address', type: 'varchar', length: '500', isNullable: true },
          { name: 'city', type: 'varchar', length: '100', isNullable: true },
          { name: 'country', type: 'varchar', length: '2', default: "'ID'" },
          { name: 'phone', type: 'varchar', length: '32', isNullable: true },
          { name: 'website', type: 'varchar', length: '255', isNullable: true },
          { name: 'status', type: 'varchar', length: '16', default: "'active'" },
          { name: 'suspended_reason', type: 'varchar', length: '500', isNullable: true },
          { name: 'relay_username', type: 'varchar', length: '32', isUnique: true },
          { name: 'relay_password_hash', type: 'varchar', length: '255', isNullable: true },
          { name: 'package_uuid', type: 'varchar', length: '36', isNullable: true },
          { name: 'period_start', type: dt, isNullable: true },
          { name: 'period_end', type: dt, isNullable: true },
          { name: 'quota', type: 'integer', default: 0 },
          { name: 'used', type: 'integer', default: 0 },
          ...timestampColumns(qr),
        ],
        indices: [{ columnNames: ['status'] }],
      }),
    );

    await qr.createTable(
      new Table({
        name: 'contacts',
        columns: [
          idColumn(),
          uuidColumn(),
          { name: 'company_id', type: 'integer' },
          { name: 'full_name', type: 'varchar', length: '200' },
          { name: 'phone', type: 'varchar', length: '32', isNullable: true },
          { name: 'position', type: 'varchar', length: '100', isNullable: true },
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
        indices: [{ columnNames: ['company_id'] }],
      }),
    );

    await qr.createTable(
      new Table({
        name: 'users',
        columns: [
          idColumn(),
          uuidColumn(),
          { name: 'email', type: 'varchar', length: '254', isUnique: true },
          { name: 'password_hash', type: 'varchar', length: '255', isNullable: true },
          { name: 'status', type: 'varchar', length: '16', default: "'pending'" },
          { name: 'email_verified_at', type: dt, isNullable: true },
          { name: 'last_login_at', type: dt, isNullable: true },
          { name: 'password_version', type: 'integer', default: 0 },
          { name: 'company_role', type: 'varchar', length: '16', default: "'owner'" },
          { name: 'company_id', type: 'integer' },
          { name: 'contact_id', type: 'integer', isUnique: true },
          ...timestampColumns(qr),
        ],
        foreignKeys: [
          {
            columnNames: ['company_id'],
            referencedTableName: 'companies',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
          { columnNames: ['contact_id'], referencedTableName: 'contacts', referencedColumnNames: ['id'] },
        ],
        indices: [{ columnNames: ['company_id'] }],
      }),
    );

    await qr.createTable(
      new Table({
        name: 'refresh_token_blacklist',
        columns: [
          { name: 'token_hash', type: 'varchar', length: '64', isPrimary: true },
          { name: 'expires_at', type: dt },
          { name: 'created_at', type: dt, default: nowDefault(qr) },
        ],
      }),
    );
    await qr.createIndex('refresh_token_blacklist', new TableIndex({ columnNames: ['expires_at'] }));
  }

  async down(qr: QueryRunner): Promise<void> {
    for (const table of [
      'refresh_token_blacklist',
      'users',
      'contacts',
      'companies',
      'admins',
      'admin_roles',
    ]) {
      await qr.dropTable(table);
    }
  }
}
