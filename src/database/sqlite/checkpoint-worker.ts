import { parentPort, workerData } from 'node:worker_threads';

/** What SqliteCheckpoints hands the worker. */
export interface CheckpointWorkerData {
  /** The database file. */
  file: string;
  /** How often to checkpoint. */
  everyMs: number;
  /** The log's length in pages past which a checkpoint also makes the next writer start it over. */
  restartAtPages: number;
}

/**
 * What the worker tells SqliteCheckpoints: it checkpoints from now on (once), or a checkpoint
 * failed (once, until one succeeds again).
 */
export type CheckpointNews = { ready: true } | { failed: string };

/** The part of a better-sqlite3 connection the worker uses. */
interface Connection {
  pragma(sql: string): unknown;
  close(): void;
}

/** What `PRAGMA wal_checkpoint` answers: the log's length and how much of it is in the file, in pages. */
interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

/**
 * The checkpoint worker: its own connection to the file, a PASSIVE checkpoint every `everyMs` (it
 * copies what it can without waiting for readers or the writer), closed on 'stop'.
 *
 * Under steady writes a PASSIVE checkpoint never leaves the log wholly copied at the moment a
 * transaction begins, so the log is never started over: it grows until the service's own
 * connection reaches `wal_autocheckpoint` and checkpoints in a COMMIT on the event loop (measured:
 * 250–500 ms). Past `restartAtPages`, a RESTART checkpoint waits for the writer's transaction to
 * end, copies the little PASSIVE has not, and makes the next writer start the log over; meanwhile
 * the service's writes wait (busy_timeout, whose back-off made that 100–180 ms, measured), so a
 * RESTART comes seldom (SqliteCheckpoints: RESTART_LOG_AT_PAGES).
 */
function checkpointEvery(
  { file, everyMs, restartAtPages }: CheckpointWorkerData,
  port: NonNullable<typeof parentPort>,
): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the driver TypeORM loads, untyped here
  const Database = require('better-sqlite3') as new (file: string, options: object) => Connection;
  const db = new Database(file, { fileMustExist: true });
  db.pragma('busy_timeout = 1000');
  let failing = false;
  const checkpoint = () => {
    try {
      const [passive] = db.pragma('wal_checkpoint(PASSIVE)') as CheckpointResult[];
      if (passive.log > restartAtPages) db.pragma('wal_checkpoint(RESTART)');
      failing = false;
    } catch (error: unknown) {
      if (!failing)
        port.postMessage({
          failed: String((error as Error | undefined)?.message),
        } satisfies CheckpointNews);
      failing = true;
    }
  };
  const timer = setInterval(checkpoint, everyMs);
  port.postMessage({ ready: true } satisfies CheckpointNews);
  port.on('message', (message) => {
    if (message !== 'stop') return;
    clearInterval(timer);
    checkpoint();
    db.close();
    port.close();
  });
}

if (parentPort) checkpointEvery(workerData as CheckpointWorkerData, parentPort);
