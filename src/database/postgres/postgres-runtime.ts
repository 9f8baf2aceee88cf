import type { DataSource } from 'typeorm';
import {
  BatchedQueryForms,
  bindLists,
  DatabaseRuntime,
  HotRead,
  KeyedRead,
  KeyedReadForms,
  LIST_PLACEHOLDER,
  ReadRow,
  readBeforeInitialised,
} from '../database-runtime';
import { pgArray } from './pg-array';
import { BatchedQuery } from './batched-query';
import { BatchedRead } from './batched-read';

/** pg's pool as TypeORM's PostgreSQL driver holds it (`master`). */
interface PoolHandle {
  query(q: { name: string; text: string; values: readonly unknown[]; rowMode: 'array' }): Promise<{
    rows: ReadRow[];
  }>;
}

/**
 * PostgreSQL: every statement is a round trip on a pooled connection, so concurrent lookups share
 * one statement (BatchedRead, BatchedQuery), hot reads are named statements run on the pool, and
 * transactions run side by side on their own connections.
 */
export class PostgresRuntime extends DatabaseRuntime {
  readonly engine = 'postgres';
  readonly bulkUnit = Number.POSITIVE_INFINITY;

  constructor(private readonly dataSource: DataSource) {
    super();
  }

  read(name: string, sql: string): HotRead {
    return new PostgresHotRead(this, this.dataSource, name, sql.replace(LIST_PLACEHOLDER, this.listMatch()));
  }

  listMatch(type?: string): string {
    return type ? `= ANY(?::${type}[])` : '= ANY(?)';
  }

  bindList(list: readonly unknown[]): unknown {
    return pgArray(list);
  }

  protected keyedReadOf<Row extends ReadRow>(forms: KeyedReadForms<Row>): KeyedRead<Row> {
    return new BatchedRead(forms.many);
  }

  batchedQuery<Params, Result>(
    forms: BatchedQueryForms<Params, Result>,
  ): (params: Params) => Promise<Result> {
    const query = new BatchedQuery(forms.many);
    return (params) => query.run(params);
  }

  transaction<T>(begin: () => Promise<T>): Promise<T> {
    return begin();
  }

  sqlDate(date: Date): Date {
    return date;
  }
}

/**
 * A named statement on the pool (`?` turned into `$1, $2, …`); through TypeORM while the data
 * source is not initialised (readBeforeInitialised).
 */
export class PostgresHotRead implements HotRead {
  private readonly sql: string;

  constructor(
    private readonly runtime: PostgresRuntime,
    private readonly dataSource: DataSource,
    private readonly name: string,
    sql: string,
  ) {
    this.sql = numberedPlaceholders(sql);
  }

  async all(params: readonly unknown[]): Promise<ReadRow[]> {
    const values = bindLists(this.name, params, (list) => this.runtime.bindList(list));
    const unavailable = await readBeforeInitialised(this.dataSource, this.sql, values);
    if (unavailable) return unavailable;
    const pool = (this.dataSource.driver as unknown as { master: PoolHandle }).master;
    const result = await pool.query({ name: this.name, text: this.sql, values, rowMode: 'array' });
    return result.rows;
  }
}

/** `?` placeholders as PostgreSQL's `$1, $2, …` (for SQL that holds no `?` of its own). */
export function numberedPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
