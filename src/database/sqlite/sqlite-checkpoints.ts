import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Worker } from 'node:worker_threads';
import { DataSource } from 'typeorm';

/** How often the worker copies the write-ahead log into the database file. */
export const CHECKPOINT_EVERY_MS = 1_000;
/** How long shutdown waits for the worker's last checkpoint. */
const STOP_MS = 5_000;

/**
 * The worker's program: its own connection to the file, a PASSIVE checkpoint every `everyMs`
 * (it copies what it can without waiting for readers or the writer), closed on 'stop'.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 1000');
let failing = false;
const checkpoint = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    failing = false;
  } catch (error) {
    if (!failing) parentPort.postMessage({ failed: String(error && error.message) });
    failing = true;
  }
};
const timer = setInterval(checkpoint, workerData.everyMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
`;

/**
 * Checkpoints of the embedded database's write-ahead log in a worker thread. SQLite otherwise
 * checkpoints inside the COMMIT that takes the log past `wal_autocheckpoint` pages, on the
 * connection that commits: better-sqlite3 runs it on the event loop, and with its fsync it held
 * every request 150–520 ms, every few seconds while log batches came in. The worker keeps the log
 * short, so the service's own connection rarely reaches its threshold (kept as the fallback
 * should the worker fall behind). Nothing to do on PostgreSQL.
 */
@Injectable()
export class SqliteCheckpoints implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SqliteCheckpoints.name);
  private worker?: Worker;

  constructor(private readonly dataSource: DataSource) {}

  onApplicationBootstrap(): void {
    const options = this.dataSource.options;
    if (options.type !== 'better-sqlite3' || !this.dataSource.isInitialized) return;
    if (options.database === ':memory:') return;
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        driver: require.resolve('better-sqlite3'),
        file: options.database,
        everyMs: CHECKPOINT_EVERY_MS,
      },
    });
    this.worker.unref();
    this.worker.on('message', (message: { failed?: string }) => {
      if (message.failed) this.logger.warn({ reason: message.failed }, 'WAL checkpoint failed; will retry');
    });
    this.worker.on('error', (error) => this.logger.error({ err: error }, 'WAL checkpoint worker stopped'));
  }

  /** Stops the worker after one last checkpoint (or at once, should it not stop within STOP_MS). */
  async onApplicationShutdown(): Promise<void> {
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
