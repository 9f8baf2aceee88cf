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
 * driver takes them: a date as `sqlDate(…)`. On SQLite the read waits, as every statement does,
 * while another request's transaction is open (SqliteTransactionGate), and it answers
 * synchronously otherwise. Before the data source is initialised (or after it is closed) it goes
 * through TypeORM, whose errors the exception filter knows as "database unavailable".
 */
export class PreparedRead {
  private readonly sql: string;
  private statement?: SqliteStatement;

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
    const statement = (this.statement ??= driver.databaseConnection.prepare(this.sql).raw(true));
    const gate = this.transactions.sqliteGate;
    if (gate?.mustWait()) return gate.admit().then(() => statement.all(...params));
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
 * that place of the parameters. On PostgreSQL it is `= ANY(?)` with the array; on SQLite `IN (?,
 * …)`, the list padded to a power of two with its last value (a repeated value changes nothing in
 * an IN list), so a handful of prepared statements serve every length. A list must not be empty.
 */
export class PreparedListRead {
  /** By padded list sizes (PostgreSQL: one, under ''). */
  private readonly reads = new Map<string, PreparedRead>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: TransactionService,
    /** The pg statement name, and the prefix of the SQLite statements'. */
    private readonly name: string,
    private readonly sql: string,
  ) {}

  all(params: readonly unknown[]): MaybePromise<ReadRow[]> {
    const sizes: number[] = [];
    const flat: unknown[] = [];
    for (const value of params) {
      if (!Array.isArray(value)) {
        flat.push(value);
        continue;
      }
      const list = value as readonly unknown[];
      if (!list.length) throw new Error(`${this.name}: an empty list`);
      if (this.transactions.isPostgres) {
        flat.push(list);
        continue;
      }
      const size = paddedSize(list.length);
      sizes.push(size);
      flat.push(...list);
      for (let n = list.length; n < size; n++) flat.push(list[list.length - 1]);
    }
    const key = sizes.join('_');
    let read = this.reads.get(key);
    if (!read) {
      let list = 0;
      const sql = this.sql.replace(/\{list\}/g, () =>
        this.transactions.isPostgres ? '= ANY(?)' : `IN (${Array(sizes[list++]).fill('?').join(', ')})`,
      );
      read = new PreparedRead(
        this.dataSource,
        this.transactions,
        key ? `${this.name}_${key}` : this.name,
        sql,
      );
      this.reads.set(key, read);
    }
    return read.all(flat);
  }
}

/** The next power of two. */
function paddedSize(count: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(1, count)));
}
