import type { DataSource } from 'typeorm';

/** One result row, its columns in the order the SELECT lists them. */
export type ReadRow = readonly unknown[];

export type DatabaseEngine = 'postgres' | 'sqlite';

/**
 * A read statement prepared once and run straight on the driver, rows as arrays: for reads on the
 * relay's hot path, where TypeORM's query runner (~50 µs a call) costs more than an indexed lookup.
 */
export interface HotRead {
  all(params: readonly unknown[]): Promise<ReadRow[]>;
}

/**
 * The two forms of a lookup by key (rows with their key at index 0, at most one per key): `many`
 * reads the keys of concurrent callers in one statement, `each` the keys of one caller.
 */
export interface KeyedReadForms<Row extends ReadRow> {
  many: (keys: string[]) => Promise<Row[]>;
  each: (keys: string[]) => Promise<Row[]>;
}

export interface KeyedRead<Row extends ReadRow> {
  /** The row of each key found. */
  load(keys: readonly string[]): Promise<Map<string, Row>>;
}

/**
 * The two forms of a statement whose calls each take their own parameters and answer their own
 * result (a page of a list; the rows a request stores): `many` answers every call's result, in
 * the calls' order, from one statement, an Error in a call's place failing that call alone;
 * `each` answers one call.
 */
export interface BatchedQueryForms<Params, Result> {
  many: (calls: Params[]) => Promise<Array<Result | Error>>;
  each: (call: Params) => Promise<Result>;
}

/**
 * Everything that differs between the two database engines, behind one provider: how hot reads
 * run, whether concurrent lookups share a statement, how a date is bound, and (SQLite) how
 * transactions keep the one shared connection to themselves. Areas ask this; they never ask which
 * engine runs. PostgresRuntime and SqliteRuntime are the two adapters (DatabaseModule picks one
 * from the data source).
 */
export abstract class DatabaseRuntime {
  abstract readonly engine: DatabaseEngine;

  get isPostgres(): boolean {
    return this.engine === 'postgres';
  }

  /**
   * A HotRead of `sql`, which uses `?` placeholders; `{list}` stands for a list (listMatch), given
   * as a non-empty array in that place of the parameters (one statement for every length). `name`
   * names the statement on the server: unique per statement text.
   */
  abstract read(name: string, sql: string): HotRead;

  /**
   * How a list is matched, the one place that says it: the SQL that follows a column for "holds
   * one of the list's values", with one `?` for the whole list (so one statement serves every
   * length), and the list as that parameter (bindList). `type`: the column's SQL type, where the
   * engine wants it.
   */
  abstract listMatch(type?: string): string;

  /** A list as the one parameter of listMatch's SQL. */
  abstract bindList(list: readonly unknown[]): unknown;

  /**
   * A lookup by key, in whichever of its two forms is fastest on this engine; one function when
   * the same statement serves both.
   */
  keyedRead<Row extends ReadRow>(
    read: KeyedReadForms<Row> | ((keys: string[]) => Promise<Row[]>),
  ): KeyedRead<Row> {
    return this.keyedReadOf(typeof read === 'function' ? { many: read, each: read } : read);
  }

  protected abstract keyedReadOf<Row extends ReadRow>(forms: KeyedReadForms<Row>): KeyedRead<Row>;

  /** A statement by call (see BatchedQueryForms), in whichever of its two forms is fastest on this engine. */
  abstract batchedQuery<Params, Result>(
    forms: BatchedQueryForms<Params, Result>,
  ): (params: Params) => Promise<Result>;

  /**
   * Runs `begin`, which begins a transaction on the data source, when this engine lets it begin:
   * at once on PostgreSQL (each transaction has a pooled connection of its own), in its turn on
   * SQLite (SqliteTransactionGate).
   */
  abstract transaction<T>(begin: () => Promise<T>): Promise<T>;

  /**
   * How many pieces of bulk work (a log batch's lines, a webhook's events) one transaction holds
   * at most. Unbounded on PostgreSQL, where transactions run side by side; a few hundred on
   * SQLite, where a transaction holds the one connection and, better-sqlite3 answering
   * synchronously, the event loop (quality.md's bound on SQLite is reached this way).
   */
  abstract readonly bulkUnit: number;

  /** A date as a parameter of a HotRead: what the driver binds. */
  abstract sqlDate(date: Date): Date | string;

  /**
   * Whether a statement made now on the driver's shared connection would land inside another
   * request's open transaction (SQLite); never where each transaction has a connection of its own.
   */
  sharedConnectionBusy(): boolean {
    return false;
  }

  /**
   * Runs `statement`, made synchronously on the driver's shared connection (a change notice), now
   * or the moment no other request's transaction holds it (see sharedConnectionBusy).
   */
  whenSharedConnectionFree<T>(statement: () => T): Promise<T> {
    return Promise.resolve().then(statement);
  }
}

/**
 * A HotRead whose data source is not initialised (yet, or any more) reads through TypeORM, whose
 * error the exception filter knows as "database unavailable"; null when it is initialised.
 */
export async function readBeforeInitialised(
  dataSource: DataSource,
  sql: string,
  values: unknown[],
): Promise<ReadRow[] | null> {
  if (dataSource.isInitialized) return null;
  const rows: Array<Record<string, unknown>> = await dataSource.query(sql, values);
  return rows.map((row) => Object.values(row));
}

/** Rows by their key (index 0); absent rows skipped. */
export function byKey<Row extends ReadRow>(rows: ReadonlyArray<Row | undefined>): Map<string, Row> {
  const found = new Map<string, Row>();
  for (const row of rows) if (row) found.set(row[0] as string, row);
  return found;
}

/** The `{list}` placeholder of a HotRead's SQL. */
export const LIST_PLACEHOLDER = /\{list\}/g;

/** The parameters with each list bound as `bindList` binds it; an empty list is refused. */
export function bindLists(
  name: string,
  params: readonly unknown[],
  bindList: (list: unknown[]) => unknown,
): unknown[] {
  return params.map((value) => {
    if (!Array.isArray(value)) return value;
    if (!value.length) throw new Error(`${name}: an empty list`);
    return bindList(value);
  });
}
