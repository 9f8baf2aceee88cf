import { parentPort, workerData } from 'node:worker_threads';

/** What SqliteCheckpoints hands the worker. */
export interface CheckpointWorkerData {
  /** The database file. */
  file: string;
  /** How often to checkpoint. */
  everyMs: number;
}

/** What the worker tells SqliteCheckpoints: a checkpoint failed (once, until one succeeds again). */
export interface CheckpointFailure {
  failed: string;
}

/** The part of a better-sqlite3 connection the worker uses. */
interface Connection {
  pragma(sql: string): unknown;
  close(): void;
}

/**
 * The checkpoint worker: its own connection to the file, a PASSIVE checkpoint every `everyMs` (it
 * copies what it can without waiting for readers or the writer), closed on 'stop'.
 */
function checkpointEvery(
  { file, everyMs }: CheckpointWorkerData,
  port: NonNullable<typeof parentPort>,
): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the driver TypeORM loads, untyped here
  const Database = require('better-sqlite3') as new (file: string, options: object) => Connection;
  const db = new Database(file, { fileMustExist: true });
  db.pragma('busy_timeout = 1000');
  let failing = false;
  const checkpoint = () => {
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
      failing = false;
    } catch (error: unknown) {
      if (!failing)
        port.postMessage({
          failed: String((error as Error | undefined)?.message),
        } satisfies CheckpointFailure);
      failing = true;
    }
  };
  const timer = setInterval(checkpoint, everyMs);
  port.on('message', (message) => {
    if (message !== 'stop') return;
    clearInterval(timer);
    checkpoint();
    db.close();
    port.close();
  });
}

if (parentPort) checkpointEvery(workerData as CheckpointWorkerData, parentPort);
