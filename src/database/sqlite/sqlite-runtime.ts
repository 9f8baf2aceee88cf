import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { DateUtils } from 'typeorm/util/DateUtils';
import {
  BatchedQueryForms,
  bindLists,
  byKey,
  DatabaseRuntime,
  HotRead,
  KeyedRead,
  KeyedReadForms,
  LIST_PLACEHOLDER,
  ReadRow,
  readBeforeInitialised,
} from '../database-runtime';
import { SqliteTransactionGate } from './sqlite-transaction-gate';

interface SqliteStatement {
  raw(toggle: boolean): SqliteStatement;
  all(...params: unknown[]): ReadRow[];
}

/** The part of a better-sqlite3 connection the hot reads use. */
interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
  pragma(sql: string): unknown;
  close(): void;
}

/**
 * SQLite (better-sqlite3): one connection shared by every request, answering in-process. Each
 * lookup reads its own keys at once (a shared statement would only add a wait), the transaction
 * gate keeps transactions to themselves on the shared connection, and hot reads made while
 * another request's transaction is open read what is committed through a read-only connection.
 */
export class SqliteRuntime extends DatabaseRuntime {
  readonly engine = 'sqlite';
  readonly bulkUnit = 200;
  /** Keeps transactions to themselves on the shared connection (SqliteTransactionGate). */
  readonly gate = new SqliteTransactionGate();
  private readonly logger = new Logger(SqliteRuntime.name);
  /** The read-only connection (see `committedReader`); null once closed or where there is none. */
  private reader?: SqliteConnection | null;

  constructor(private readonly dataSource: DataSource) {
    super();
    this.gate.install(dataSource);
  }

  read(name: string, sql: string): HotRead {
    return new SqliteHotRead(
      this,
      this.dataSource,
      name,
      sql.replace(LIST_PLACEHOLDER, 'IN (SELECT value FROM json_each(?))'),
    );
  }

  protected keyedReadOf<Row extends ReadRow>(forms: KeyedReadForms<Row>): KeyedRead<Row> {
    return { load: async (keys) => byKey(await forms.each([...keys])) };
  }

  batchedQuery<Params, Result>(
    forms: BatchedQueryForms<Params, Result>,
  ): (params: Params) => Promise<Result> {
    return (params) => forms.each(params);
  }

  transaction<T>(begin: () => Promise<T>): Promise<T> {
    return this.gate.transaction(begin);
  }

  /** The text TypeORM stores (UTC `YYYY-MM-DD HH:MM:SS.SSS`), by TypeORM's own formatter. */
  sqlDate(date: Date): string {
    return DateUtils.mixedDateToUtcDatetimeString(date) as string;
  }

  /**
   * A second, read-only connection to the database file, for the hot reads made while another
   * request's transaction is open. In WAL mode it reads the last committed state at once, where
   * the shared connection would make the read wait for that transaction: a log batch's
   * transaction spans many turns of the event loop (it yields, SqliteTransactionGate), and relay
   * decisions waited for it up to 455 ms in the bench. Opened at first use; none for an in-memory
   * database.
   */
  committedReader(): SqliteConnection | undefined {
    if (this.reader !== undefined) return this.reader ?? undefined;
    const file = this.dataSource.options.database;
    if (typeof file !== 'string' || file === ':memory:' || file === '') {
      this.reader = null;
      return undefined;
    }
    if (!this.dataSource.isInitialized) return undefined;
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the driver TypeORM loads
      const Database = require('better-sqlite3') as new (file: string, options: object) => SqliteConnection;
      const reader = new Database(file, { readonly: true, fileMustExist: true });
      // A WAL reader is busy only while another connection recovers the log: wait little, synchronously.
      reader.pragma('busy_timeout = 100');
      this.reader = reader;
    } catch (e: unknown) {
      // Reads then wait for the open transaction, as before there was a reader.
      this.logger.warn(
        { err: e },
        'No read-only connection to the database file; reads wait for transactions',
      );
      this.reader = null;
    }
    return this.reader ?? undefined;
  }

  override close(): void {
    this.reader?.close();
    this.reader = null;
  }
}

/**
 * A better-sqlite3 statement prepared once. While another request's transaction is open on the
 * shared connection it reads what is committed through the read-only connection instead of
 * waiting for that transaction (an in-memory database has none: there it waits for that
 * transaction, not for those queued behind it). Through TypeORM while the data source is not
 * initialised (readBeforeInitialised).
 */
export class SqliteHotRead implements HotRead {
  private statement?: SqliteStatement;
  private committedStatement?: SqliteStatement;

  constructor(
    private readonly runtime: SqliteRuntime,
    private readonly dataSource: DataSource,
    private readonly name: string,
    private readonly sql: string,
  ) {}

  async all(params: readonly unknown[]): Promise<ReadRow[]> {
    const values = bindLists(this.name, params, (list) => JSON.stringify(list));
    const unavailable = await readBeforeInitialised(this.dataSource, this.sql, values);
    if (unavailable) return unavailable;
    const gate = this.runtime.gate;
    if (gate.mustWait()) {
      const reader = this.runtime.committedReader();
      if (reader) return (this.committedStatement ??= reader.prepare(this.sql).raw(true)).all(...values);
    }
    return gate.whenNoOpenTransaction(() => {
      const connection = (this.dataSource.driver as unknown as { databaseConnection: SqliteConnection })
        .databaseConnection;
      return (this.statement ??= connection.prepare(this.sql).raw(true)).all(...values);
    });
  }
}
