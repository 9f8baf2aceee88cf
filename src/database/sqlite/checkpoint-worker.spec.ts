import { closeSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import type { CheckpointWorkerData } from './checkpoint-worker';

/** The part of a better-sqlite3 connection the test uses (the package has no types of its own). */
interface Connection {
  pragma(sql: string): unknown;
  exec(sql: string): void;
  prepare(sql: string): { run(...params: unknown[]): unknown; get(): unknown };
  close(): void;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the driver TypeORM loads, untyped
const Database = require('better-sqlite3') as new (file: string) => Connection;

const RESTART_AT_PAGES = 500;
/**
 * Written at most before the test gives up on seeing the log start over twice (a 2 MB bound).
 * Without the RESTART it never does (measured: not once in 384 MB). With it, a writer that never
 * pauses gives the worker's RESTART few chances, the more so on a fast machine: the second time
 * came after 14–71 MB and the fourth after 42–104 MB in five runs on a quiet 2-core machine (Node
 * 20 and 26), and a CI run saw only one in 96 MB, the bound (for four) until then.
 */
const MOST_BYTES = 384 * 1024 * 1024;

/** The log's checkpoint sequence number (its header's bytes 12–15): one more each time the log starts over. */
function logSequence(wal: string): number {
  const header = Buffer.alloc(16);
  const fd = openSync(wal, 'r');
  try {
    readSync(fd, header, 0, 16, 0);
  } finally {
    closeSync(fd);
  }
  return header.readUInt32BE(12);
}

/**
 * The checkpoint worker on a real file, written to without a pause the way the service writes
 * under load (a transaction, a turn of the event loop, the next): PASSIVE checkpoints alone never
 * leave the log wholly copied when a transaction begins, so only the worker's RESTART past its
 * bound makes the log start over and stay short.
 */
describe('checkpoint worker', () => {
  let dir: string;
  let db: Connection;
  let worker: Worker;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'checkpoint-worker-'));
    db = new Database(join(dir, 'probe.sqlite'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    db.pragma('wal_autocheckpoint = 0');
    db.exec('CREATE TABLE probe (body BLOB NOT NULL)');
    worker = new Worker(join(__dirname, 'checkpoint-worker.ts'), {
      execArgv: ['--require', 'ts-node/register/transpile-only'],
      workerData: {
        file: join(dir, 'probe.sqlite'),
        everyMs: 20,
        restartAtPages: RESTART_AT_PAGES,
      } satisfies CheckpointWorkerData,
    });
  });
  afterEach(async () => {
    await worker.terminate();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes the log start over once it passes its bound, though the writes never pause', async () => {
    const wal = join(dir, 'probe.sqlite-wal');
    await new Promise((ready) => worker.once('message', ready));
    const insert = db.prepare('INSERT INTO probe (body) VALUES (?)');
    const row = Buffer.alloc(16 * 1024, 7);
    // Bytes written when the log started over each time.
    const startedOver: number[] = [];
    let sequence = logSequence(wal);
    let written = 0;
    while (startedOver.length < 2) {
      if (written > MOST_BYTES)
        throw new Error(`the log started over ${startedOver.length} times in ${written} bytes`);
      insert.run(row);
      written += row.length;
      if (logSequence(wal) !== sequence) {
        sequence = logSequence(wal);
        startedOver.push(written);
      }
      await nextTurn();
    }
    expect(startedOver[1]).toBeLessThan(MOST_BYTES);
    expect(db.prepare('SELECT COUNT(*) AS n FROM probe').get()).toEqual({ n: written / row.length });
  });
});
