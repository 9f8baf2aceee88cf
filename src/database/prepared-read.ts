import type { DataSource } from 'typeorm';
import { DateUtils } from 'typeorm/util/DateUtils';
import type { MaybePromise } from '../common/maybe-promise';
import type { TransactionService } from './transaction.service';

/** One result row, its columns in the order the SELECT lists them. */
export type ReadRow = readonly unknown[];

/**
 * A read statement prepared once and run straight on the driver (better-sqlite3's prepared
 * statement, a pg named statement), rows as arrays. TypeORM's query runner costs ~50 µs a call,
 * more than an indexed lookup itself: this is for reads on the relay's hot path.
 *
 * `sql` uses `?` placeholders, turned into `$1, $2, …` for PostgreSQL. Values are passed as the
 * driver takes them: a date as `sqlDate(…)`. On SQLite it answers synchronously: while another
 * request's transaction is open on the shared connection (SqliteTransactionGate), it reads what
 * is committed through a read-only connection instead of waiting for that transaction (an
 * in-memory database has none: there it waits for that transaction, not for those queued behind
 * it). Before the data source is initialised (or after it is closed) it goes through TypeORM,
 * whose errors the exception filter knows as "database unavailable".
 */
export class PreparedRead {
  private readonly sql: string;
  private statement?: SqliteStatement;
  /** The same statement on the read-only connection (TransactionService.committedReader). */
  private committedStatement?: SqliteStatement;

  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: TransactionService,
    /** The pg statement name: unique per statement text. */
    private readonly name: string,
    sql: string,
  ) {
    let n = 0;
    this.sql = transactions.isPostgres ? sql.replace(/\?/g, () => `$${++n}`) : sql;
  }

  all(params: readonly unknown[]): MaybePromise<ReadRow[]> {
    if (!this.dataSource.isInitialized) return this.throughTypeOrm(params);
    const driver = this.dataSource.driver as unknown as DriverHandles;
    if (this.transactions.isPostgres) {
      return driver
        .master!.query({ name: this.name, text: this.sql, values: params, rowMode: 'array' })
        .then((result) => result.rows);
    }
    const gate = this.transactions.sqliteGate;
    if (gate?.mustWait()) {
      // Another request's transaction is open on the shared connection: read what is committed.
      const reader = this.transactions.committedReader();
      if (reader) return (this.committedStatement ??= reader.prepare(this.sql).raw(true)).all(...params);
    }
    const statement = (this.statement ??= driver.databaseConnection.prepare(this.sql).raw(true));
    if (gate?.mustWait()) return gate.untilNoOpenTransaction().then(() => statement.all(...params));
    return statement.all(...params);
  }

  private async throughTypeOrm(params: readonly unknown[]): Promise<ReadRow[]> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(this.sql, [...params]);
    return rows.map((row) => Object.values(row));
  }
}

/**
 * A date as a parameter of a PreparedRead: the Date for pg; on SQLite the text TypeORM stores
 * (UTC `YYYY-MM-DD HH:MM:SS.SSS`), by TypeORM's own formatter, the one its driver binds with.
 */
export function sqlDate(date: Date, transactions: TransactionService): Date | string {
  return transactions.isPostgres ? date : (DateUtils.mixedDateToUtcDatetimeString(date) as string);
}

/** The two drivers' native handles: pg's pool (`master`) or better-sqlite3's database. */
interface DriverHandles {
  master?: {
    query(q: { name: string; text: string; values: readonly unknown[]; rowMode: 'array' }): Promise<{
      rows: ReadRow[];
    }>;
  };
  databaseConnection: { prepare(sql: string): SqliteStatement };
}

interface SqliteStatement {
  raw(toggle: boolean): SqliteStatement;
  all(...params: unknown[]): ReadRow[];
}

/**
 * A PreparedRead with list parameters: `{list}` in the SQL stands for a list, given as an array in
 * that place of the parameters. On PostgreSQL it is `= ANY(?)` with the array; on SQLite
 * `IN (SELECT value FROM json_each(?))` with the list as JSON: one statement for every length on
 * both, and the index is used as with an `IN (?, …)` list (SQLite: `SEARCH … USING INDEX`, a
 * read of 4 keys among 200,000 rows measured at 13 µs either way). A list must not be empty.
 */
export class PreparedListRead {
  private readonly read: PreparedRead;

  constructor(
    dataSource: DataSource,
    private readonly transactions: TransactionService,
    /** The pg statement name: unique per statement text. */
    private readonly name: string,
    sql: string,
  ) {
    const list = transactions.isPostgres ? '= ANY(?)' : 'IN (SELECT value FROM json_each(?))';
    this.read = new PreparedRead(dataSource, transactions, name, sql.replace(/\{list\}/g, list));
  }

  all(params: readonly unknown[]): MaybePromise<ReadRow[]> {
    const bound = params.map((value) => {
      if (!Array.isArray(value)) return value;
      if (!value.length) throw new Error(`${this.name}: an empty list`);
      return this.transactions.isPostgres ? value : JSON.stringify(value);
    });
    return this.read.all(bound);
  }
}
