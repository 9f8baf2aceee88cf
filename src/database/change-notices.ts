import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Client, Notification } from 'pg';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { DatabaseRuntime } from './database-runtime';

/** How long a lost LISTEN connection waits before it connects again. */
const RECONNECT_MS = 1_000;
/** The LISTEN connection's application_name, to tell it apart in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = 'relay-change-notices';
/** How often an SQLite process catches up by itself, between the catch-ups of its decisions. */
export const CATCH_UP_MS = 1_000;
/** How often an SQLite process that sends notices deletes the old ones (its own and the others'). */
const PRUNE_EVERY_MS = 10_000;
/** What an SQLite notice older than this is worth: nothing, what listens caches for 5 s at most. */
const KEEP_NOTICES = '-60 seconds';

/** A PostgreSQL notification's payload. */
interface Notice {
  from: string;
  payload: unknown;
}

/** A notice waiting to be written to SQLite. */
interface Outgoing {
  channel: string;
  payload: string;
}

/** The part of better-sqlite3 used here (TypeORM's driver holds the handle as `databaseConnection`). */
interface SqliteDatabase {
  readonly inTransaction: boolean;
  prepare(sql: string): SqliteStatement;
}

interface SqliteStatement {
  pluck(): SqliteStatement;
  raw(): SqliteStatement;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): unknown;
}

/** The statements of this class, prepared once on TypeORM's SQLite connection. */
interface SqliteStatements {
  db: SqliteDatabase;
  dataVersion: SqliteStatement;
  lastId: SqliteStatement;
  since: SqliteStatement;
  insert: SqliteStatement;
  prune: SqliteStatement;
}

/** A row of `since`: id, channel, sender, payload. */
type NoticeRow = [number, string, string, string];

/**
 * Notices between the processes that share a database (the API's replicas and the relay agent,
 * whose relay decision caches companies and domain owners): what one process announces, the
 * others' handlers hear. An application does not hear its own notices, and a process hears only
 * what is sent after it started listening, in the order it was sent (by one sender).
 *
 * PostgreSQL: `pg_notify` on the channel (one at a time, so that they stay in order), heard by a
 * connection of its own that LISTENs, a few milliseconds after the commit. `catchUp` does nothing.
 *
 * SQLite (processes on the same file): `publish` writes a row to `change_notices` on TypeORM's one
 * connection (at once, or once another request's open transaction ends: SqliteTransactionGate),
 * and deletes rows older than a minute every 10 s or so; a failure is logged. `catchUp` reads
 * `PRAGMA data_version`, which changes when another connection has committed anything, and only
 * then the rows after the last one it saw, delivering those of the other applications as
 * PostgreSQL's are delivered. It costs a few microseconds when nothing changed (one prepared
 * statement on the driver's handle, no TypeORM), so the relay decision calls it before it reads
 * what it cached: the decision sees every change committed elsewhere before it was asked. While
 * a transaction is open on the shared connection it leaves the reading to the next call (the
 * connection would read that transaction's snapshot). A timer also calls it every second, so that
 * a process that makes no decision hears changes within a second too: what caches without
 * calling `catchUp` (the attribution of log records by a queue's company) is never a second
 * late, and handlers do not wait for traffic to run. Its cost (one pragma a second) is nothing.
 */
@Injectable()
export class ChangeNotices implements OnApplicationShutdown {
  private readonly logger = new Logger(ChangeNotices.name);
  private readonly handlers = new Map<string, Set<(payload: unknown) => void>>();
  /** Called once a lost LISTEN connection listens again: the notices of the gap are lost. */
  private readonly reconnectHandlers = new Set<() => void>();
  /** PostgreSQL: the LISTEN connection has been lost since it last listened. */
  private missed = false;
  private client?: Client;
  private reconnect?: NodeJS.Timeout;
  private closed = false;
  /** This application, so that it can tell its own notices from the others'. */
  private readonly id = randomUUID();
  /** PostgreSQL notices in flight, sent one after the other. */
  private sending: Promise<void> = Promise.resolve();
  /** SQLite: notices not written yet (another request's transaction is open), in order. */
  private outbox: Outgoing[] = [];
  private statements?: SqliteStatements;
  /** SQLite: the data version and the last notice read, once listening. */
  private cursor?: { version: unknown; lastId: number };
  private catchUpTimer?: NodeJS.Timeout;
  /** PostgreSQL: done once the LISTEN connection has listened to every channel so far (see `listening`). */
  private listened: Promise<void> = Promise.resolve();
  /** SQLite: the outbox's wait for another request's transaction to end. */
  private writing?: Promise<void>;
  private nextPrune = 0;
  /** SQLite: a failure to read or write notices is logged once until it works again. */
  private failing = { read: false, write: false };

  constructor(
    private readonly config: AppConfig,
    private readonly dataSource: DataSource,
    private readonly runtime: DatabaseRuntime,
  ) {}

  private get databaseUrl(): string | undefined {
    return this.config.env.DATABASE_URL || undefined;
  }

  /** Sends `payload` (JSON) to the other processes listening on `channel`. Failures are logged, never thrown. */
  publish(channel: string, payload: unknown): void {
    if (this.closed) return;
    let json: string;
    try {
      const notice: Notice = { from: this.id, payload };
      json = JSON.stringify(this.runtime.isPostgres ? notice : (payload ?? null));
    } catch (e: unknown) {
      this.logger.warn({ err: e, channel }, 'Change notice not sent');
      return;
    }
    if (this.runtime.isPostgres) {
      if (!this.dataSource.isInitialized) return;
      this.sending = this.sending.then(() =>
        this.dataSource.query('SELECT pg_notify($1, $2)', [channel, json]).then(
          () => undefined,
          (e: unknown) => this.logger.warn({ err: e, channel }, 'Change notice not sent'),
        ),
      );
      return;
    }
    this.outbox.push({ channel, payload: json });
    if (this.outbox.length === 1) this.write();
  }

  /**
   * Delivers the notices other processes committed since the last call, before a decision reads
   * what it cached. Nothing to do on PostgreSQL (LISTEN delivers them as they come). On SQLite,
   * one prepared `PRAGMA data_version` when nothing changed.
   */
  catchUp(): void {
    if (this.handlers.size > 0 && !this.runtime.isPostgres && !this.closed) this.read();
  }

  /**
   * Calls `handler` with the payload of every notice another process sends on `channel` from now
   * on (until the returned function is called). On SQLite, what was sent before is delivered
   * first to the handlers already there.
   */
  listen(channel: string, handler: (payload: unknown) => void): () => void {
    if (!this.runtime.isPostgres) {
      this.read();
      if (!this.catchUpTimer && !this.closed) {
        this.catchUpTimer = setInterval(() => this.catchUp(), CATCH_UP_MS);
        this.catchUpTimer.unref();
      }
    }
    let handlers = this.handlers.get(channel);
    if (!handlers) {
      this.handlers.set(channel, (handlers = new Set()));
      const client = this.client;
      // After the connection's own LISTENs: one query at a time on it.
      if (client) this.listened = this.listened.then(() => listenOn(client, channel));
    }
    handlers.add(handler);
    if (this.runtime.isPostgres && !this.client && !this.reconnect)
      this.listened = this.connect().catch(() => undefined);
    return () => {
      handlers.delete(handler);
    };
  }

  /**
   * Calls `handler` each time the notices of a gap may have been lost: on PostgreSQL once the
   * LISTEN connection, lost (a restart, a network cut, a terminated backend), listens again.
   * What caches on the strength of notices forgets everything then, since a change made during the
   * gap was announced to nobody. Never on SQLite, whose notices wait in their table. Answers the
   * function that stops it.
   */
  onReconnect(handler: () => void): () => void {
    this.reconnectHandlers.add(handler);
    return () => {
      this.reconnectHandlers.delete(handler);
    };
  }

  /**
   * Resolves once the channels listened to so far are heard: on PostgreSQL when the LISTEN
   * connection has run their LISTEN (or failed to connect, and connects again by itself), on
   * SQLite at once. For tests, and whatever must not miss a notice sent right after `listen`.
   */
  async listening(): Promise<void> {
    for (let done: Promise<void> | undefined; done !== this.listened;) {
      done = this.listened;
      await done;
    }
  }

  /** Resolves once the notices published so far are sent: notified (PostgreSQL) or written (SQLite). */
  async sent(): Promise<void> {
    while (this.writing) await this.writing;
    await this.sending;
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.outbox.length > 0 && !this.runtime.sharedConnectionBusy()) this.write();
    this.closed = true;
    clearTimeout(this.reconnect);
    clearInterval(this.catchUpTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
    await this.sending;
  }

  /**
   * SQLite: delivers the notices of other applications committed since the last read; the first
   * read only notes where the table stands. Skipped while a transaction is open on the shared
   * connection (it would read that transaction's snapshot, and its uncommitted ids): the next
   * call reads.
   */
  private read(): void {
    if (this.closed) return;
    try {
      const sql = this.sqlite();
      if (!sql || sql.db.inTransaction) return;
      const version = sql.dataVersion.get();
      if (!this.cursor) {
        // The version first: what is committed after it and before the last id is read again, never missed.
        this.cursor = { version, lastId: Number(sql.lastId.get() ?? 0) };
      } else if (version !== this.cursor.version) {
        this.cursor.version = version;
        for (const [id, channel, sender, payload] of sql.since.all(this.cursor.lastId) as NoticeRow[]) {
          this.cursor.lastId = id;
          this.deliver(channel, sender, parsed(payload));
        }
      }
      this.failing.read = false;
    } catch (e: unknown) {
      if (!this.failing.read) this.logger.warn({ err: e }, 'Change notices not read');
      this.failing.read = true;
    }
  }

  /** SQLite: writes the outbox, now or once no other request's transaction is open. */
  private write(): void {
    if (this.runtime.sharedConnectionBusy()) {
      this.writing = this.runtime.whenSharedConnectionFree(() => {
        this.writing = undefined;
        this.write();
      });
      return;
    }
    const outgoing = this.outbox;
    this.outbox = [];
    if (this.closed) return;
    try {
      const sql = this.sqlite();
      if (!sql) return;
      for (const { channel, payload } of outgoing) sql.insert.run(channel, payload, this.id);
      if (Date.now() >= this.nextPrune) {
        this.nextPrune = Date.now() + PRUNE_EVERY_MS;
        sql.prune.run(KEEP_NOTICES);
      }
      this.failing.write = false;
    } catch (e: unknown) {
      if (!this.failing.write) this.logger.warn({ err: e }, 'Change notices not sent');
      this.failing.write = true;
    }
  }

  /** The statements on TypeORM's SQLite handle, prepared again if the handle changed; none while the data source is closed. */
  private sqlite(): SqliteStatements | undefined {
    if (!this.dataSource.isInitialized) return undefined;
    const db = (this.dataSource.driver as unknown as { databaseConnection?: SqliteDatabase })
      .databaseConnection;
    if (!db) return undefined;
    if (this.statements?.db === db) return this.statements;
    this.statements = {
      db,
      dataVersion: db.prepare('PRAGMA data_version').pluck(),
      lastId: db.prepare('SELECT MAX(id) FROM change_notices').pluck(),
      since: db
        .prepare('SELECT id, channel, sender, payload FROM change_notices WHERE id > ? ORDER BY id')
        .raw(),
      insert: db.prepare('INSERT INTO change_notices (channel, payload, sender) VALUES (?, ?, ?)'),
      prune: db.prepare(
        "DELETE FROM change_notices WHERE created_at < strftime('%Y-%m-%d %H:%M:%f', 'now', ?)",
      ),
    };
    return this.statements;
  }

  private async connect(): Promise<void> {
    this.reconnect = undefined;
    if (this.closed) return;
    const client = new Client({
      connectionString: this.databaseUrl,
      connectionTimeoutMillis: 5_000,
      application_name: LISTENER_APPLICATION_NAME,
    });
    client.on('notification', (n) => this.received(n));
    client.on('error', (e) => this.lost(client, e));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    this.client = client;
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN ${quoted(channel)}`);
    } catch (e: unknown) {
      this.lost(client, e);
      return;
    }
    if (this.missed && this.client === client) {
      this.missed = false;
      this.logger.log('Change notices connection listening again; caches forget what they held');
      for (const handler of [...this.reconnectHandlers]) {
        try {
          handler();
        } catch (e: unknown) {
          this.logger.error({ err: e }, 'Change notices reconnect handler failed');
        }
      }
    }
  }

  private lost(client: Client, error: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.missed = true;
    void client.end().catch(() => undefined);
    if (this.closed) return;
    this.logger.warn({ err: error }, 'Change notices connection lost; connecting again');
    this.reconnect = setTimeout(() => {
      this.listened = this.connect().catch(() => undefined);
    }, RECONNECT_MS);
    this.reconnect.unref();
  }

  /** A PostgreSQL notification. */
  private received({ channel, payload }: Notification): void {
    const notice = parsed(payload ?? '') as Partial<Notice> | undefined;
    if (typeof notice?.from === 'string') this.deliver(channel, notice.from, notice.payload);
  }

  /** Hands a notice of another application to the handlers of its channel; one that is not JSON is ignored. */
  private deliver(channel: string, from: string, payload: unknown): void {
    if (from === this.id || payload === undefined) return;
    for (const handler of this.handlers.get(channel) ?? []) {
      try {
        handler(payload);
      } catch (e: unknown) {
        this.logger.error({ err: e, channel }, 'Change notice handler failed');
      }
    }
  }
}

/** The value of a JSON text, or undefined when it is not JSON. */
function parsed(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return undefined;
  }
}

/** LISTENs to `channel` on `client`; a failure is the connection's (it reconnects and LISTENs again). */
function listenOn(client: Client, channel: string): Promise<void> {
  return client.query(`LISTEN ${quoted(channel)}`).then(
    () => undefined,
    () => undefined,
  );
}

/** A channel name as an SQL identifier (LISTEN takes no parameter). */
function quoted(channel: string): string {
  return `"${channel.replace(/"/g, '""')}"`;
}
