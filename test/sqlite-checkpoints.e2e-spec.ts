import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { statSync } from 'node:fs';
import { CHECKPOINT_EVERY_MS } from '../src/database/sqlite/sqlite-checkpoints';
import { TransactionService } from '../src/database/transaction.service';
import { createTestApp, TestApp } from './support/test-app';

const onSqlite = !process.env.DATABASE_URL;
/** Well under the service connection's own threshold (wal_autocheckpoint = 30,000 pages of 4 KB). */
const WRITTEN_BYTES = 8 * 1024 * 1024;

/**
 * The embedded database's write-ahead log is copied into the database file by a worker thread,
 * not by the COMMIT of a request on the event loop (src/database/sqlite/sqlite-checkpoints.ts).
 */
(onSqlite ? describe : describe.skip)('SQLite checkpoints in a worker thread', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('copies what requests committed into the database file, below the threshold at which a COMMIT would', async () => {
    const file = (t.dataSource.options as { database: string }).database;
    await t.dataSource.query('CREATE TABLE checkpoint_probe (body TEXT NOT NULL)');
    const before = statSync(file).size;
    const row = 'x'.repeat(64 * 1024);
    for (let i = 0; i < WRITTEN_BYTES / row.length; i++) {
      await t.dataSource.query('INSERT INTO checkpoint_probe (body) VALUES (?)', [row]);
    }
    // The worker's next checkpoints grow the database file by what was written.
    for (
      const deadline = Date.now() + 20 * CHECKPOINT_EVERY_MS;
      statSync(file).size - before < WRITTEN_BYTES;
    ) {
      if (Date.now() > deadline)
        throw new Error(`not checkpointed: ${statSync(file).size - before} bytes copied`);
      await new Promise((resolve) => setTimeout(resolve, CHECKPOINT_EVERY_MS / 4));
    }
    const [{ n }] = await t.dataSource.query<Array<{ n: number }>>(
      'SELECT COUNT(*) AS n FROM checkpoint_probe',
    );
    expect(n).toBe(WRITTEN_BYTES / row.length);
  });

  it('a transaction that reads before it writes waits while another connection holds the write lock', async () => {
    const file = (t.dataSource.options as { database: string }).database;
    await t.dataSource.query('CREATE TABLE lock_probe (n INTEGER NOT NULL)');
    // Another connection holds the write lock a moment, as the checkpoint worker does in a RESTART.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `const db = new (require('better-sqlite3'))(${JSON.stringify(file)});
         db.exec('BEGIN IMMEDIATE');
         process.stdout.write('held\\n');
         setTimeout(() => { db.exec('COMMIT'); db.close(); }, 300);`,
      ],
      { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = once(holder, 'exit');
    await once(holder.stdout, 'data');
    await t.app.get(TransactionService).run(async (em) => {
      await em.query('SELECT COUNT(*) AS n FROM lock_probe');
      await em.query('INSERT INTO lock_probe (n) VALUES (1)');
    });
    expect(await exited).toEqual([0, null]);
    expect(await t.dataSource.query('SELECT n FROM lock_probe')).toEqual([{ n: 1 }]);
  });
});
