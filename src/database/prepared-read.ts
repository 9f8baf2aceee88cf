import type { DataSource } from 'typeorm';
import { MaybePromise, then } from '../common/maybe-promise';
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

/** A date as a parameter of a PreparedRead: TypeORM's SQLite form (UTC `YYYY-MM-DD HH:MM:SS.SSS`), or the Date for pg. */
export function sqlDate(date: Date, transactions: TransactionService): Date | string {
  return transactions.isPostgres ? date : date.toISOString().replace('T', ' ').replace('Z', '');
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
 * Several reads answered together, each a SELECT of the same columns with its own parameters.
 * On PostgreSQL they run as one `UNION ALL` statement: one round trip, each part still planned
 * on its own index. On SQLite each runs as its own statement: there is no round trip to save,
 * and SQLite plans a UNION of index searches worse than the searches apart (measured ~4× slower).
 *
 * `{list}` in a part's SQL is a list parameter, given as an array in that place of the part's
 * parameters: `= ANY(?)` with the array on PostgreSQL; on SQLite `IN (?, …)`, the list padded to
 * a power of two with its last value (a repeated value changes nothing in an IN list), so a
 * handful of prepared statements serve every length. A list must not be empty.
 */
export class PreparedReads {
  private union?: PreparedRead;
  /** SQLite: by part and padded list sizes. */
  private readonly separate = new Map<string, PreparedRead>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: TransactionService,
    /** The pg statement name, and the prefix of the SQLite statements'. */
    private readonly name: string,
    private readonly parts: readonly string[],
  ) {}

  /** The rows of each part, in the order of the parts; `params[i]` are part i's. */
  all(params: ReadonlyArray<readonly unknown[]>): MaybePromise<ReadRow[][]> {
    if (params.length !== this.parts.length) {
      throw new Error(`${this.name}: ${this.parts.length} parts, ${params.length} parameter lists`);
    }
    for (const partParams of params) {
      for (const value of partParams) {
        if (Array.isArray(value) && !value.length) throw new Error(`${this.name}: an empty list`);
      }
    }
    if (this.transactions.isPostgres) {
      this.union ??= new PreparedRead(
        this.dataSource,
        this.transactions,
        this.name,
        this.parts
          .map((part, i) => `SELECT ${i} AS part, q.* FROM (${part.replace(/\{list\}/g, '= ANY(?)')}) q`)
          .join(' UNION ALL '),
      );
      return then(this.union.all(params.flat()), (rows) => {
        const byPart: ReadRow[][] = this.parts.map(() => []);
        for (const [part, ...columns] of rows) byPart[part as number].push(columns);
        return byPart;
      });
    }
    const results: Array<MaybePromise<ReadRow[]>> = params.map((partParams, i) => {
      const sizes: number[] = [];
      const flat: unknown[] = [];
      for (const value of partParams) {
        if (!Array.isArray(value)) {
          flat.push(value);
          continue;
        }
        const list = value as readonly unknown[];
        const size = paddedSize(list.length);
        sizes.push(size);
        flat.push(...list);
        for (let n = list.length; n < size; n++) flat.push(list[list.length - 1]);
      }
      const key = `${i}_${sizes.join('_')}`;
      let read = this.separate.get(key);
      if (!read) {
        let list = 0;
        const sql = this.parts[i].replace(
          /\{list\}/g,
          () => `IN (${Array(sizes[list++]).fill('?').join(', ')})`,
        );
        read = new PreparedRead(this.dataSource, this.transactions, `${this.name}_${key}`, sql);
        this.separate.set(key, read);
      }
      return read.all(flat);
    });
    // Synchronous on SQLite unless a transaction holds the connection (then each read waits for it).
    return results.some((r) => r instanceof Promise)
      ? Promise.all(results.map((r) => Promise.resolve(r)))
      : (results as ReadRow[][]);
  }
}

/** The next power of two. */
function paddedSize(count: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(1, count)));
}
