import { Logger } from '@nestjs/common';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config';
import { ChangeNotices } from './change-notices';
import { buildDataSourceOptions } from './data-source-options';
import { createDatabaseRuntime } from './database.module';
import { TransactionService } from './transaction.service';

/** One process's view of the SQLite file: its connection, its transactions, its notices. */
interface Process {
  dataSource: DataSource;
  transactions: TransactionService;
  notices: ChangeNotices;
  heard: unknown[];
}

/**
 * ChangeNotices on SQLite, between two "processes" (two data sources on one file, as the API and
 * the relay agent are): what SqliteTransactionGate and the table's ids mean for the notices.
 * test/change-notices.e2e-spec.ts covers the applications themselves.
 */
// The entities' column types are chosen from DATABASE_URL when they load: SQLite runs only.
const onSqlite = process.env.DATABASE_URL ? describe.skip : describe;

onSqlite('ChangeNotices on SQLite', () => {
  let dir: string;
  let api: Process;
  let agent: Process;

  async function process(): Promise<Process> {
    const dataSource = await new DataSource(buildDataSourceOptions({ dataDir: dir })).initialize();
    const runtime = createDatabaseRuntime(dataSource);
    const transactions = new TransactionService(dataSource, runtime);
    const notices = new ChangeNotices({ env: {} } as AppConfig, dataSource, runtime);
    const heard: unknown[] = [];
    notices.listen('test_channel', (payload) => heard.push(payload));
    return { dataSource, transactions, notices, heard };
  }

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'relay-notices-'));
    api = await process();
    agent = await process();
  });
  afterEach(async () => {
    for (const p of [api, agent]) {
      await p.notices.onApplicationShutdown();
      await p.dataSource.destroy();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('hears another process only when it catches up, and once', () => {
    api.notices.publish('test_channel', { n: 1 });
    expect(agent.heard).toEqual([]);
    agent.notices.catchUp();
    agent.notices.catchUp();
    api.notices.catchUp();
    expect(agent.heard).toEqual([{ n: 1 }]);
    expect(api.heard).toEqual([]);
  });

  it('reads nothing of an open transaction, and writes a notice published meanwhile once it ends, even if it rolls back', async () => {
    agent.notices.publish('test_channel', { n: 0 });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let written!: () => void;
    const inserted = new Promise<void>((resolve) => (written = resolve));
    const transaction = api.transactions
      .run(async (em) => {
        await em.query(
          `INSERT INTO change_notices (channel, payload, sender) VALUES ('test_channel', '"rolled back"', 'x')`,
        );
        written();
        await held;
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    await inserted;
    api.notices.publish('test_channel', { n: 1 });
    api.notices.catchUp();
    expect(api.heard).toEqual([]);
    release();
    await transaction;
    await api.notices.sent();
    api.notices.catchUp();
    agent.notices.catchUp();
    expect(api.heard).toEqual([{ n: 0 }]);
    expect(agent.heard).toEqual([{ n: 1 }]);
    const rows: Array<{ payload: string }> = await agent.dataSource.query(
      'SELECT payload FROM change_notices',
    );
    expect(rows.map((r) => r.payload)).toEqual(['{"n":0}', '{"n":1}']);
  });

  it('keeps notices for a minute, and never gives a pruned notice’s id to a new one', async () => {
    api.notices.publish('test_channel', { n: 1 });
    agent.notices.catchUp();
    await agent.dataSource.query(
      "UPDATE change_notices SET created_at = strftime('%Y-%m-%d %H:%M:%f', 'now', '-61 seconds')",
    );
    // A process that has not sent anything yet prunes with its first notice.
    agent.notices.publish('test_channel', { n: 2 });
    api.notices.catchUp();
    const rows: Array<{ id: number; payload: string }> = await api.dataSource.query(
      'SELECT id, payload FROM change_notices',
    );
    expect(rows).toEqual([{ id: 2, payload: '{"n":2}' }]);
    api.notices.publish('test_channel', { n: 3 });
    agent.notices.catchUp();
    // Every notice gone: the next one still comes after the last one the agent read.
    await agent.dataSource.query('DELETE FROM change_notices');
    api.notices.publish('test_channel', { n: 4 });
    agent.notices.catchUp();
    expect(agent.heard).toEqual([{ n: 1 }, { n: 3 }, { n: 4 }]);
    expect(api.heard).toEqual([{ n: 2 }]);
  });

  it('logs a notice it cannot send or read, and does not throw', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      await api.dataSource.query('DROP TABLE change_notices');
      expect(() => api.notices.publish('test_channel', { n: 1 })).not.toThrow();
      api.notices.publish('test_channel', { n: 2 });
      expect(() => agent.notices.catchUp()).not.toThrow();
      agent.notices.catchUp();
      expect(agent.heard).toEqual([]);
      // Once each, until it works again.
      expect(warn.mock.calls.map(([, message]) => message)).toEqual([
        'Change notices not sent',
        'Change notices not read',
      ]);
    } finally {
      warn.mockRestore();
    }
  });
});
