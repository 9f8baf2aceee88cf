import { DataSource } from 'typeorm';
import { SqliteRuntime } from './sqlite-runtime';
import { SqliteStatistics } from './sqlite-statistics';

/**
 * SqliteStatistics on a real better-sqlite3 data source: a table analysed while small, then grown,
 * is looked up by a list of keys with a scan until the statistics are refreshed, and through its
 * index after.
 */
describe('SqliteStatistics', () => {
  let dataSource: DataSource;

  beforeEach(async () => {
    dataSource = await new DataSource({ type: 'better-sqlite3', database: ':memory:' }).initialize();
    await dataSource.query(
      'CREATE TABLE events (id integer PRIMARY KEY, message varchar(200), record varchar(64))',
    );
    await dataSource.query('CREATE INDEX ix_events_message ON events (message)');
  });
  afterEach(async () => {
    await dataSource.destroy();
  });

  const insertEvents = (from: number, to: number) =>
    dataSource.query(
      `WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO events (id, message) SELECT i, 'm' || i FROM n`,
      [from, to],
    );
  const keys = Array.from({ length: 100 }, (_, i) => `m${i * 7 + 1}`);
  /** The plan of a lookup of 100 keys, and of an update of 100 rows by id, as the delivery code makes them. */
  const plans = async () => {
    const marks = keys.map(() => '?').join(', ');
    const read = await dataSource.query<Array<{ detail: string }>>(
      `EXPLAIN QUERY PLAN SELECT id FROM events WHERE message IN (${marks})`,
      keys,
    );
    const ids = keys.map((_, i) => i * 7 + 1);
    const write = await dataSource.query<Array<{ detail: string }>>(
      `EXPLAIN QUERY PLAN UPDATE events SET record = 'r' WHERE id IN (${marks}) AND record IS NULL`,
      ids,
    );
    return [...read, ...write].map((row) => row.detail.split(' ').slice(0, 1).join(' '));
  };

  it('re-analyses a table that grew far beyond its statistics, so key lookups use the index again', async () => {
    await insertEvents(1, 300);
    await dataSource.query('ANALYZE');
    await insertEvents(301, 30_000);
    // The planner still sees 300 rows: 100 index lookups cost more than scanning them.
    expect(await plans()).toEqual(['SCAN', 'SCAN']);

    await new SqliteStatistics(dataSource).refresh();

    expect(await plans()).toEqual(['SEARCH', 'SEARCH']);
    const [stat] = await dataSource.query<Array<{ stat: string }>>(
      "SELECT stat FROM sqlite_stat1 WHERE idx = 'ix_events_message'",
    );
    expect(Number(stat.stat.split(' ')[0])).toBeGreaterThan(10_000);
  });

  it('leaves statistics that still describe their table as they are', async () => {
    await insertEvents(1, 1_000);
    await dataSource.query('ANALYZE');
    await insertEvents(1_001, 1_100);
    await new SqliteStatistics(dataSource).refresh();
    const [stat] = await dataSource.query<Array<{ stat: string }>>(
      "SELECT stat FROM sqlite_stat1 WHERE idx = 'ix_events_message'",
    );
    expect(stat.stat.split(' ')[0]).toBe('1000');
  });

  it('is started by the SQLite runtime when the application starts, and stopped at shutdown', async () => {
    const refresh = jest.spyOn(SqliteStatistics.prototype, 'refresh');
    const stop = jest.spyOn(SqliteStatistics.prototype, 'stop');
    try {
      const runtime = new SqliteRuntime(dataSource);
      expect(refresh).not.toHaveBeenCalled();
      await runtime.onApplicationBootstrap();
      expect(refresh).toHaveBeenCalledTimes(1);
      await runtime.onApplicationShutdown();
      expect(stop).toHaveBeenCalledTimes(1);
    } finally {
      refresh.mockRestore();
      stop.mockRestore();
    }
  });
});
