import { Logger } from '@nestjs/common';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { DataSource } from 'typeorm';
import type { CheckpointNews, CheckpointWorkerData } from './checkpoint-worker';

/**
 * How often the worker copies the write-ahead log into the database file: often, so that each
 * copy is small and the log, between copies, short.
 */
export const CHECKPOINT_EVERY_MS = 250;
/**
 * The log's length (pages of 4 KB) past which the worker makes the next writer start it over: a
 * RESTART makes the service's writes wait (busy_timeout, whose back-off turns a 60 ms wait into
 * 100–180 ms, measured), so it comes seldom; under that, the log starts over by itself whenever
 * the writes pause. The service's own connection checkpoints only past wal_autocheckpoint (30,000).
 */
export const RESTART_LOG_AT_PAGES = 20_000;
/** How long shutdown waits for the worker's last checkpoint. */
const STOP_MS = 5_000;
/** The worker's file: compiled beside this one in dist/, the TypeScript source when run from src/. */
const WORKER_FILE = [join(__dirname, 'checkpoint-worker.js'), join(__dirname, 'checkpoint-worker.ts')].find(
  existsSync,
)!;

/**
 * Checkpoints of the embedded database's write-ahead log in a worker thread. SQLite otherwise
 * checkpoints inside the COMMIT that takes the log past `wal_autocheckpoint` pages, on the
 * connection that commits: better-sqlite3 runs it on the event loop, and with its fsync it held
 * every request 150–520 ms, every few seconds while log batches came in. The worker keeps the log
 * short (see checkpoint-worker.ts), so the service's own connection does not reach its threshold
 * (kept as the fallback should the worker fall behind). Started and stopped by SqliteRuntime.
 */
export class SqliteCheckpoints {
  private readonly logger = new Logger(SqliteCheckpoints.name);
  private worker?: Worker;

  constructor(private readonly dataSource: DataSource) {}

  /** Starts the worker; nothing for an in-memory database, which has no log to copy. */
  start(): void {
    const options = this.dataSource.options;
    if (options.type !== 'better-sqlite3' || options.database === ':memory:') return;
    this.worker = new Worker(WORKER_FILE, {
      // From the sources (the tests), the worker is TypeScript: ts-node compiles it.
      execArgv: WORKER_FILE.endsWith('.ts') ? ['--require', 'ts-node/register/transpile-only'] : [],
      workerData: {
        file: options.database,
        everyMs: CHECKPOINT_EVERY_MS,
        restartAtPages: RESTART_LOG_AT_PAGES,
      } satisfies CheckpointWorkerData,
    });
    this.worker.unref();
    this.worker.on('message', (message: CheckpointNews) => {
      if ('failed' in message)
        this.logger.warn({ reason: message.failed }, 'WAL checkpoint failed; will retry');
    });
    this.worker.on('error', (error) => this.logger.error({ err: error }, 'WAL checkpoint worker stopped'));
  }

  /** Stops the worker after one last checkpoint (or at once, should it not stop within STOP_MS). */
  async stop(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.worker = undefined;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('stop');
    const late = setTimeout(() => void worker.terminate(), STOP_MS);
    await exited;
    clearTimeout(late);
  }
}
