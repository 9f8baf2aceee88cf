import { Pool, Query } from 'pg';
import { DataSource } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner';
import { DateUtils } from 'typeorm/util/DateUtils';
import { PgClient } from './postgres/pg-client';

/**
 * What src/database/ takes from TypeORM and pg beyond their documented API (docs/maintainers.md, "Database
 * internals we rely on"), and the documented behaviour the SQLite gate stands on: when an upgrade
 * moves one, this spec fails before the service does. Runs without a PostgreSQL server.
 */
describe('Database driver internals we rely on', () => {
  describe('TypeORM on better-sqlite3', () => {
    let dataSource: DataSource;

    beforeAll(async () => {
      dataSource = await new DataSource({ type: 'better-sqlite3', database: ':memory:' }).initialize();
    });
    afterAll(async () => {
      await dataSource.destroy();
    });

    it('holds the better-sqlite3 handle as driver.databaseConnection (sqlite-runtime, change-notices)', () => {
      const db = (dataSource.driver as unknown as { databaseConnection: BetterSqliteHandle })
        .databaseConnection;
      expect(db.inTransaction).toBe(false);
      expect(db.prepare('SELECT 1, 2').raw(true).all()).toEqual([[1, 2]]);
      expect(db.prepare('SELECT 3').pluck().get()).toBe(3);
    });

    it("awaits a subscriber's beforeQuery before the statement and tells it of transactions (sqlite-transaction-gate)", async () => {
      const seen: string[] = [];
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const subscriber = {
        beforeQuery: (event: { query: string }) => {
          seen.push(`before ${event.query}`);
          return event.query === 'SELECT 41' ? held : undefined;
        },
        afterQuery: (event: { query: string }) => void seen.push(`after ${event.query}`),
        beforeTransactionStart: () => void seen.push('transaction'),
        afterTransactionCommit: () => void seen.push('commit'),
      };
      dataSource.subscribers.push(subscriber);
      try {
        const first = dataSource.query('SELECT 41');
        await new Promise((resolve) => setImmediate(resolve));
        expect(seen).toEqual(['before SELECT 41']);
        release();
        await first;
        await dataSource.transaction((em) => em.query('SELECT 42'));
        expect(seen).toEqual([
          'before SELECT 41',
          'after SELECT 41',
          'transaction',
          'before BEGIN TRANSACTION',
          'after BEGIN TRANSACTION',
          'before SELECT 42',
          'after SELECT 42',
          'before COMMIT',
          'after COMMIT',
          'commit',
        ]);
      } finally {
        dataSource.subscribers.splice(dataSource.subscribers.indexOf(subscriber), 1);
      }
    });

    it('answers a structured result (records, affected) when query() is asked for one (sql-dialect)', async () => {
      const runner = dataSource.createQueryRunner();
      try {
        await runner.query('CREATE TABLE probe (k integer PRIMARY KEY)');
        const inserted = await runner.query('INSERT INTO probe (k) VALUES (1), (2) RETURNING k', [], true);
        expect(inserted).toMatchObject({ records: [{ k: 1 }, { k: 2 }] });
        const ignored = await runner.query(
          'INSERT INTO probe (k) VALUES (2), (3) ON CONFLICT DO NOTHING',
          [],
          true,
        );
        expect(ignored).toMatchObject({ affected: 1 });
      } finally {
        await runner.release();
      }
    });

    it("binds values as TypeORM's formatter writes them: dates as UTC text, booleans as 0/1, transformers applied (sql-dialect, sqlDate)", () => {
      const at = new Date('2026-01-02T03:04:05.678Z');
      const column = (type: unknown, transformer?: unknown) =>
        ({ type, transformer }) as unknown as ColumnMetadata;
      expect(DateUtils.mixedDateToUtcDatetimeString(at)).toBe('2026-01-02 03:04:05.678');
      expect(dataSource.driver.preparePersistentValue(at, column('datetime'))).toBe(
        '2026-01-02 03:04:05.678',
      );
      expect(dataSource.driver.preparePersistentValue(true, column('boolean'))).toBe(1);
      const doubled = { to: (n: number) => n * 2, from: (n: number) => n };
      expect(dataSource.driver.preparePersistentValue(4, column('integer', doubled))).toBe(8);
    });
  });

  describe('TypeORM on pg', () => {
    it('keeps its pool as driver.master (postgres-runtime)', () => {
      expect(String(Reflect.get(PostgresDriver.prototype, 'connect'))).toMatch(
        /this\.master = await this\.createPool\(/,
      );
    });

    it("hands the error of releasePostgresConnection(err) to the pool's release, which destroys the client (sql-dialect, withNamedLock)", async () => {
      const release = Reflect.get(PostgresQueryRunner.prototype, 'releasePostgresConnection') as (
        err: unknown,
      ) => Promise<void>;
      const releaseCallback = jest.fn();
      const runner = { isReleased: false, releaseCallback, driver: { connectedQueryRunners: [] } };
      const err = new Error('unlock failed');
      await release.call(runner, err);
      expect(releaseCallback).toHaveBeenCalledWith(err);
    });
  });

  describe('pg', () => {
    it('takes the client class of a pool from its options (data-source-options, pg-client)', () => {
      expect(Reflect.get(new Pool({ Client: PgClient }), 'Client')).toBe(PgClient);
    });

    it('tells a submittable from a query text by its submit method (pg-client)', () => {
      expect(typeof new Query('SELECT 1').submit).toBe('function');
    });
  });
});

interface BetterSqliteHandle {
  readonly inTransaction: boolean;
  prepare(sql: string): {
    raw(toggle: boolean): { all(): unknown[] };
    pluck(): { get(): unknown };
  };
}
