import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
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
import { SqliteCheckpoints } from './sqlite-checkpoints';
import { SqliteStatistics } from './sqlite-statistics';
import { SqliteWriteLock } from './sqlite-write-lock';
import { SqliteTransactionGate } from './sqlite-transaction-gate';

interface SqliteStatement {
  raw(toggle: boolean): SqliteStatement;
  all(...params: unknown[]): ReadRow[];
}

/** The part of a better-sqlite3 connection the hot reads use. */
interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
}

/**
 * SQLite (better-sqlite3): one connection shared by every request, answering in-process. Each
 * lookup reads its own keys at once (a shared statement would only add a wait), the transaction
 * gate keeps transactions to themselves on the shared connection, and a hot read made while
 * another request's transaction is open waits for that transaction only (its units are short:
 * `bulkUnit`), not for those queued behind it. While the application runs it keeps the file in
 * shape: the write-ahead log copied into it (SqliteCheckpoints) and the planner's statistics up to
 * date (SqliteStatistics).
 */
export class SqliteRuntime extends DatabaseRuntime implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly engine = 'sqlite';
  readonly bulkUnit = 200;
  /** Keeps transactions to themselves on the shared connection (SqliteTransactionGate). */
  readonly gate = new SqliteTransactionGate();
  private readonly checkpoints: SqliteCheckpoints;
  private readonly statistics: SqliteStatistics;

  constructor(private readonly dataSource: DataSource) {
    super();
    this.gate.install(dataSource);
    new SqliteWriteLock().install(dataSource);
    this.checkpoints = new SqliteCheckpoints(dataSource);
    this.statistics = new SqliteStatistics(dataSource);
  }

  /** The file's upkeep, once the data source is open (it may not be: /health answers 503 then). */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.dataSource.isInitialized) return;
    this.checkpoints.start();
    await this.statistics.start();
  }

  async onApplicationShutdown(): Promise<void> {
    this.statistics.stop();
    await this.checkpoints.stop();
  }

  read(name: string, sql: string): HotRead {
    return new SqliteHotRead(this, this.dataSource, name, sql.replace(LIST_PLACEHOLDER, this.listMatch()));
  }

  listMatch(): string {
    return 'IN (SELECT value FROM json_each(?))';
  }

  bindList(list: readonly unknown[]): string {
    return JSON.stringify(list);
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

  override sharedConnectionBusy(): boolean {
    return this.gate.mustWait();
  }

  override whenSharedConnectionFree<T>(statement: () => T): Promise<T> {
    return this.gate.whenNoOpenTransaction(statement);
  }

  /** The text TypeORM stores (UTC `YYYY-MM-DD HH:MM:SS.SSS`), by TypeORM's own formatter. */
  sqlDate(date: Date): string {
    return DateUtils.mixedDateToUtcDatetimeString(date) as string;
  }
}

/**
 * A better-sqlite3 statement prepared once on the shared connection. While another request's
 * transaction is open it waits for that transaction, not for those queued behind it
 * (SqliteTransactionGate.whenNoOpenTransaction). Through TypeORM while the data source is not
 * initialised (readBeforeInitialised).
 */
export class SqliteHotRead implements HotRead {
  private statement?: SqliteStatement;

  constructor(
    private readonly runtime: SqliteRuntime,
    private readonly dataSource: DataSource,
    private readonly name: string,
    private readonly sql: string,
  ) {}

  async all(params: readonly unknown[]): Promise<ReadRow[]> {
    const values = bindLists(this.name, params, (list) => this.runtime.bindList(list));
    const unavailable = await readBeforeInitialised(this.dataSource, this.sql, values);
    if (unavailable) return unavailable;
    return this.runtime.gate.whenNoOpenTransaction(() => {
      const connection = (this.dataSource.driver as unknown as { databaseConnection: SqliteConnection })
        .databaseConnection;
      return (this.statement ??= connection.prepare(this.sql).raw(true)).all(...values);
    });
  }
}
