import type { QueryRunner, TableColumnOptions } from 'typeorm';

/** Helpers for migrations written once with TypeORM's portable schema API (SQLite and PostgreSQL). */
export const datetimeType = (qr: QueryRunner): string =>
  qr.dataSource.driver.options.type === 'postgres' ? 'timestamptz' : 'datetime';

export const idColumn = (): TableColumnOptions => ({
  name: 'id',
  type: 'integer',
  isPrimary: true,
  isGenerated: true,
  generationStrategy: 'increment',
});

export const uuidColumn = (): TableColumnOptions => ({
  name: 'uuid',
  type: 'varchar',
  length: '36',
  isUnique: true,
});

/** The current time as a column default, with milliseconds on SQLite too (CURRENT_TIMESTAMP has whole seconds there). */
export const nowDefault = (qr: QueryRunner): string =>
  qr.dataSource.driver.options.type === 'postgres'
    ? 'CURRENT_TIMESTAMP'
    : "(strftime('%Y-%m-%d %H:%M:%f', 'now'))";

export const timestampColumns = (qr: QueryRunner): TableColumnOptions[] => [
  { name: 'created_at', type: datetimeType(qr), default: nowDefault(qr) },
  { name: 'updated_at', type: datetimeType(qr), default: nowDefault(qr) },
];

export const binaryType = (qr: QueryRunner): string =>
  qr.dataSource.driver.options.type === 'postgres' ? 'bytea' : 'blob';
