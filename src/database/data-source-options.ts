import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DataSourceOptions } from 'typeorm';
import { COLUMN_TYPES_FOR } from './column-types';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';
import { PgClient } from './postgres/pg-client';
import { SnakeNamingStrategy } from './snake-naming.strategy';

export interface DatabaseSettings {
  databaseUrl?: string;
  dataDir: string;
}

/** PostgreSQL when DATABASE_URL is set, otherwise the embedded SQLite file in DATA_DIR (WAL mode). */
export function buildDataSourceOptions({ databaseUrl, dataDir }: DatabaseSettings): DataSourceOptions {
  const database = databaseUrl ? 'postgres' : 'sqlite';
  if (database !== COLUMN_TYPES_FOR) {
    // The entities were decorated from DATABASE_URL as it was when they were imported.
    throw new Error(`The entities' column types are ${COLUMN_TYPES_FOR}'s, the database is ${database}`);
  }
  const common = {
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsRun: true,
    migrationsTransactionMode: 'each' as const,
    synchronize: false,
    namingStrategy: new SnakeNamingStrategy(),
    logging: false,
  };
  if (databaseUrl) {
    return {
      ...common,
      type: 'postgres',
      url: databaseUrl,
      extra: { max: 20, connectionTimeoutMillis: 5000, Client: PgClient },
    };
  }
  mkdirSync(dataDir, { recursive: true });
  return {
    ...common,
    type: 'better-sqlite3',
    database: join(dataDir, 'relay.sqlite'),
    prepareDatabase: (db: { pragma(sql: string): unknown }) => {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.pragma('busy_timeout = 5000');
      db.pragma('foreign_keys = ON');
      db.pragma('wal_autocheckpoint = 30000');
      db.pragma('cache_size = -32000');
      db.pragma('temp_store = MEMORY');
    },
  };
}
