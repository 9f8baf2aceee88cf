import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
      kind: 'sqlite',
      env: { DATA_DIR: dataDir, DATABASE_URL: '' },
      async activateUser(email) {
        const db = new DataSource({ type: 'better-sqlite3', database: join(dataDir, 'relay.sqlite') });
        await db.initialize();
        try {
          // TypeORM's better-sqlite3 driver stores datetimes as UTC 'YYYY-MM-DD HH:MM:SS.SSS'.
          const now = new Date().toISOString().replace('T', ' ').replace('Z', '');
          await db.query("UPDATE users SET status = 'active', email_verified_at = ? WHERE email = ?", [
            now,
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
        const db = new DataSource({ type: 'better-sqlite3', database: join(dataDir, 'relay.sqlite') });
        await db.initialize();
        try {
          await db.transaction(async (em) => {
            // TypeORM's better-sqlite3 driver stores datetimes as UTC 'YYYY-MM-DD HH:MM:SS.SSS'.
            const bind = (p: unknown) =>
              p instanceof Date ? p.toISOString().replace('T', ' ').replace('Z', '') : p;
            for (const { sql, params } of statements) await em.query(sql, params.map(bind));
          });
        } finally {
          await db.destroy();
        }
      },
      async query<T>(sql: string, params: unknown[]): Promise<T[]> {
        const db = new DataSource({ type: 'better-sqlite3', database: join(dataDir, 'relay.sqlite') });
        await db.initialize();
        try {
          return await db.query<T[]>(sql, params);
        } finally {
          await db.destroy();
        }
      },
      drop: () => Promise.resolve(removeDir()),
    };
  }

  const name = `relay_bench_${process.pid}_${randomBytes(4).toString('hex')}`;
  await withClient(baseUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  return {
    kind: 'postgres',
    env: { DATA_DIR: dataDir, DATABASE_URL: databaseUrl },
    async activateUser(email) {
      const result = await withClient(databaseUrl, (c) =>
        c.query("UPDATE users SET status = 'active', email_verified_at = now() WHERE email = $1", [email]),
      );
      if (result.rowCount !== 1) throw new Error(`No user ${email} to activate`);
    },
    async execute(statements) {
      await withClient(databaseUrl, async (c) => {
        await c.query('BEGIN');
        for (const { sql, params } of statements) {
          let n = 0;
          await c.query(
            sql.replace(/\?/g, () => `$${++n}`),
            params,
          );
        }
        await c.query('COMMIT');
      });
    },
    async query<T>(sql: string, params: unknown[]): Promise<T[]> {
      let n = 0;
      const result = await withClient(databaseUrl, (c) =>
        c.query(
          sql.replace(/\?/g, () => `$${++n}`),
          params,
        ),
      );
      return result.rows as T[];
    },
    async drop() {
      await withClient(baseUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
      removeDir();
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
