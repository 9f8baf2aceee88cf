import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';

export interface BenchDatabase {
  kind: 'sqlite' | 'postgres';
  /** What the service gets: DATA_DIR always, DATABASE_URL for PostgreSQL. */
  env: Record<string, string>;
  /** Marks a registered user verified and active, as following the verification link would. */
  activateUser(email: string): Promise<void>;
  /** Runs statements written with `?` placeholders, in one transaction, on the service's database. */
  execute(statements: Array<{ sql: string; params: unknown[] }>): Promise<void>;
  /** One read with `?` placeholders. */
  query<T>(sql: string, params: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

/**
 * A fresh database for one bench run: the embedded SQLite file in a temp DATA_DIR, or, when
 * BENCH_DATABASE_URL is set, a new PostgreSQL database created beside the one it names (and
 * dropped at the end), so the bench never writes into an existing database.
 */
export async function benchDatabase(baseUrl = process.env.BENCH_DATABASE_URL): Promise<BenchDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'relay-bench-'));
  const removeDir = () => rmSync(dataDir, { recursive: true, force: true });
  if (!baseUrl) {
    return {
      ...sqliteAt(join(dataDir, 'relay.sqlite')),
      env: { DATA_DIR: dataDir, DATABASE_URL: '' },
      drop: () => Promise.resolve(removeDir()),
    };
  }

  const name = `relay_bench_${process.pid}_${randomBytes(4).toString('hex')}`;
  await withClient(baseUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  return {
    ...postgresAt(databaseUrl),
    env: { DATA_DIR: dataDir, DATABASE_URL: databaseUrl },
    async drop() {
      await withClient(baseUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
      removeDir();
    },
  };
}

/** The database the service is configured with (DATABASE_URL, else DATA_DIR's SQLite file), as it is. */
export function configuredDatabase(
  env: NodeJS.ProcessEnv = process.env,
): Pick<BenchDatabase, 'kind' | 'execute' | 'query'> {
  return env.DATABASE_URL
    ? postgresAt(env.DATABASE_URL)
    : sqliteAt(join(resolve(env.DATA_DIR || './data'), 'relay.sqlite'));
}

type DatabaseAccess = Pick<BenchDatabase, 'kind' | 'activateUser' | 'execute' | 'query'>;

function sqliteAt(file: string): DatabaseAccess {
  const open = async () => {
    const db = new DataSource({ type: 'better-sqlite3', database: file });
    await db.initialize();
    return db;
  };
  // TypeORM's better-sqlite3 driver stores datetimes as UTC 'YYYY-MM-DD HH:MM:SS.SSS'.
  const bind = (p: unknown) => (p instanceof Date ? p.toISOString().replace('T', ' ').replace('Z', '') : p);
  return {
    kind: 'sqlite',
    async activateUser(email) {
      const db = await open();
      try {
        await db.query("UPDATE users SET status = 'active', email_verified_at = ? WHERE email = ?", [
          bind(new Date()),
          email,
        ]);
        const rows: Array<{ status: string }> = await db.query('SELECT status FROM users WHERE email = ?', [
          email,
        ]);
        if (rows[0]?.status !== 'active') throw new Error(`No user ${email} to activate`);
      } finally {
        await db.destroy();
      }
    },
    async execute(statements) {
      const db = await open();
      try {
        await db.transaction(async (em) => {
          for (const { sql, params } of statements) await em.query(sql, params.map(bind));
        });
      } finally {
        await db.destroy();
      }
    },
    async query<T>(sql: string, params: unknown[]): Promise<T[]> {
      const db = await open();
      try {
        return await db.query<T[]>(sql, params.map(bind));
      } finally {
        await db.destroy();
      }
    },
  };
}

function postgresAt(databaseUrl: string): DatabaseAccess {
  const numbered = (sql: string) => {
    let n = 0;
    return sql.replace(/\?/g, () => `$${++n}`);
  };
  return {
    kind: 'postgres',
    async activateUser(email) {
      const result = await withClient(databaseUrl, (c) =>
        c.query("UPDATE users SET status = 'active', email_verified_at = now() WHERE email = $1", [email]),
      );
      if (result.rowCount !== 1) throw new Error(`No user ${email} to activate`);
    },
    async execute(statements) {
      await withClient(databaseUrl, async (c) => {
        await c.query('BEGIN');
        for (const { sql, params } of statements) await c.query(numbered(sql), params);
        await c.query('COMMIT');
      });
    },
    async query<T>(sql: string, params: unknown[]): Promise<T[]> {
      const result = await withClient(databaseUrl, (c) => c.query(numbered(sql), params));
      return result.rows as T[];
    },
  };
}

async function withClient<T>(connectionString: string, run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}
