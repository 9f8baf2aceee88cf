import { Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import {
  DataSource,
  EntityManager,
  EntityTarget,
  ObjectLiteral,
  QueryRunner,
  SelectQueryBuilder,
} from 'typeorm';
import type { Driver } from 'typeorm/driver/Driver';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import type { EntityMetadata } from 'typeorm/metadata/EntityMetadata';
import type { QueryResult } from 'typeorm/query-runner/QueryResult';
import { chunks } from './chunks';
import { DatabaseRuntime } from './database-runtime';
import { EntityRowReader } from './entity-row-reader';
import { pgArray } from './postgres/pg-array';
import { pgTakesAsIs } from './postgres/pg-as-is';
import { numberedPlaceholders } from './postgres/postgres-runtime';

/** First key of our advisory locks ("rela"), so they never meet another application's on the same database. */
export const LOCK_NAMESPACE = 0x72656c61;

/** Second key of a named lock: a stable 32-bit integer from its name. */
export function lockKey(name: string): number {
  return createHash('sha256').update(name).digest().readInt32BE(0);
}

/** What `withNamedLock` did: ran the work, or skipped it because the lock is held elsewhere. */
export type NamedLockOutcome<T> = { acquired: true; result: T } | { acquired: false };

/** The calendar unit of `utcPeriod`. */
export type PeriodUnit = 'day' | 'month';

/**
 * TypeORM's PostgresQueryRunner (0.3) releases its pg client with an error through this
 * method, which makes the pool destroy the client (and so end the session and its locks).
 */
interface ReleasableWithError {
  releasePostgresConnection(err: unknown): Promise<void>;
}

type LockRow = { locked: boolean };

/**
 * The rows findIn reads: each `in` column holding one of its values (every list non-empty), each
 * `isNull` column NULL.
 */
export interface ListMatch<T> {
  in: Partial<Record<keyof T & string, ReadonlyArray<string | number>>>;
  isNull?: Array<keyof T & string>;
}

/**
 * How findIn reads: in the order of one field (ascending), and write-locked for the rest of the
 * transaction on PostgreSQL (`FOR UPDATE`; SQLite's transaction already runs alone).
 */
export interface FindInOrder<T> {
  orderBy?: keyof T & string;
  forUpdate?: boolean;
}

/**
 * What insertMany does with a row whose unique key is taken: skip it, overwrite and add to fields,
 * or nothing (`none`: the statement fails; for rows the caller knows are new, which spares
 * PostgreSQL the upsert's conflict check).
 */
export type InsertConflict<T> =
  | 'ignore'
  | 'none'
  | { key: Array<keyof T & string>; update?: Array<keyof T & string>; add?: Array<keyof T & string> };

/**
 * A queue table's rows claimed a few per group (claimPerGroup): the groups to read and how many
 * rows each may give, which rows are ready and in what order, and what a claimed row is given.
 */
export interface GroupedClaim<T> {
  /** The column that groups the rows (an endpoint's id); an integer column. */
  group: keyof T & string;
  groups: ReadonlyArray<{ value: number; limit: number }>;
  /** SQL over the alias `q`: the rows that may be claimed, with `:named` parameters. */
  ready: string;
  parameters: Record<string, unknown>;
  /** Which rows of a group go first: columns, ascending. */
  order: Array<keyof T & string>;
  /** Rows claimed at most over all groups: each group's first rows before any group's later ones. */
  total: number;
  /** What a claimed row is given (a claim token, a lease). */
  set: Partial<T>;
}

/** A row of updateEach: the fields that find it and the values it is given. */
export interface RowUpdate<T> {
  match: Partial<T>;
  set: Partial<T>;
  /** Numbers added to the row's own (`n = n + value`): counters moved by many writers at once. */
  add?: Partial<Record<keyof T & string, number>>;
}

/** SQLite's bound on the arms of one compound SELECT is 500. */
const SQLITE_GROUPS_PER_STATEMENT = 200;

/** The column of an entity's property; an error naming the operation when it has none. */
function propertyColumn(metadata: EntityMetadata, property: string, operation: string): ColumnMetadata {
  const found = metadata.findColumnWithPropertyName(property);
  if (!found) throw new Error(`${operation}: ${metadata.name} has no column ${property}`);
  return found;
}

/** A value as TypeORM binds it for its column (transformers, SQLite's dates and booleans); undefined as NULL. */
function boundValue(driver: Driver, value: unknown, column: ColumnMetadata): unknown {
  return (driver.preparePersistentValue(value, column) as unknown) ?? null;
}

/**
 * A column's values as the one parameter of `$n::type[]` (pgArray), each bound as boundValue binds
 * it; a column pg takes as it is (text, numbers, booleans, timestamps) skips TypeORM's preparation.
 */
function pgColumn(driver: Driver, column: ColumnMetadata, values: unknown[]): string | readonly unknown[] {
  return pgArray(pgTakesAsIs(column) ? values : values.map((v) => boundValue(driver, v, column)));
}

/** Rows per INSERT … SELECT FROM unnest(…) on PostgreSQL: bounds one statement's size, not its parameters. */
const PG_ROWS_PER_STATEMENT = 5_000;

/**
 * What differs between the two databases, in one place: no module outside src/database/ asks
 * which database it runs on; it names the operation it needs instead. PostgreSQL runs
 * transactions concurrently and needs row locks; SQLite runs one transaction at a time
 * (SqliteTransactionGate) in one process, so locks there are no-ops.
 */
@Injectable()
export class SqlDialect {
  private readonly logger = new Logger(SqlDialect.name);
  private readonly readers = new Map<string, EntityRowReader<ObjectLiteral>>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly runtime: DatabaseRuntime,
  ) {}

  /** The runtime's engine (for src/database/ and the specs only: everything else asks for an operation of this class). */
  get isPostgres(): boolean {
    return this.runtime.isPostgres;
  }

  /** `SELECT … FOR UPDATE` (of the given aliases only, when joins are involved); nothing on SQLite. */
  forUpdate<T extends ObjectLiteral>(qb: SelectQueryBuilder<T>, ...aliases: string[]): SelectQueryBuilder<T> {
    if (this.isPostgres) qb.setLock('pessimistic_write', undefined, aliases.length > 0 ? aliases : undefined);
    return qb;
  }

  /**
   * `SELECT … FOR UPDATE SKIP LOCKED`: the rows no other transaction holds, locked for this one,
   * so that several processes share a queue and each row goes to one of them. Nothing on SQLite,
   * where the transaction already runs alone.
   */
  skipLocked<T extends ObjectLiteral>(qb: SelectQueryBuilder<T>): SelectQueryBuilder<T> {
    if (this.isPostgres) qb.setLock('pessimistic_write').setOnLocked('skip_locked');
    return qb;
  }

  /**
   * Write-locks the rows `qb` selects for the rest of the transaction without using them:
   * on SQLite, where the transaction already runs alone, no statement is sent at all.
   */
  async lockRows<T extends ObjectLiteral>(qb: SelectQueryBuilder<T>): Promise<void> {
    if (!this.isPostgres) return;
    await this.forUpdate(qb).getMany();
  }

  /**
   * Inserts the rows whose unique keys are free and skips the others: insertMany with `ignore`
   * (the same path), answering how many rows were really inserted.
   */
  insertIgnoringDuplicates<T extends ObjectLiteral>(
    manager: EntityManager,
    target: EntityTarget<T>,
    rows: Array<Partial<T>>,
  ): Promise<number> {
    return this.insertMany(manager, target, rows, 'ignore');
  }

  /**
   * A multi-row INSERT written here rather than by TypeORM's InsertQueryBuilder, whose parameter
   * handling costs more than the statement itself for batches of hundreds of rows (the log
   * ingest's); the one insert path of the service that skips or merges rows whose unique key is
   * taken. Every row gives the same fields; a field left out (or undefined in the first row) takes
   * its column's database default; no entity listeners run, so give what a listener would (a
   * uuid). Values are bound as TypeORM binds them (`driver.preparePersistentValue`: transformers,
   * SQLite's dates and booleans). `conflict`: `ignore` (`ON CONFLICT DO NOTHING`) or the key,
   * the fields to overwrite (`update`: `SET f = excluded.f`) and the counters to add to (`add`:
   * `SET n = n + excluded.n`). Answers the rows inserted or updated: with `ignore`, a row a
   * concurrent insert took first is not counted. PostgreSQL gets the rows as one array per column
   * (`SELECT * FROM unnest(…)`), SQLite a VALUES list.
   */
  async insertMany<T extends ObjectLiteral>(
    manager: EntityManager,
    target: EntityTarget<T>,
    rows: Array<Partial<T>>,
    conflict: InsertConflict<T>,
  ): Promise<number> {
    return (await this.insertRows(manager, target, rows, conflict)).affected;
  }

  /**
   * insertMany with `ignore`, answering the values of `key` (a unique column) of the rows it
   * really inserted, through `RETURNING`: which of a batch were new, without reading first.
   */
  async insertNew<T extends ObjectLiteral, K extends keyof T & string>(
    manager: EntityManager,
    target: EntityTarget<T>,
    rows: Array<Partial<T>>,
    key: K,
  ): Promise<Array<T[K]>> {
    return (await this.insertRows(manager, target, rows, 'ignore', [key])).returned.map(
      (row) => row[key],
    ) as Array<T[K]>;
  }

  /**
   * insertNew for a key of several columns (a composite unique key): the `keys` fields of the rows
   * really inserted, as their values were given.
   */
  async insertNewKeys<T extends ObjectLiteral, K extends keyof T & string>(
    manager: EntityManager,
    target: EntityTarget<T>,
    rows: Array<Partial<T>>,
    keys: K[],
  ): Promise<Array<Pick<T, K>>> {
    return (await this.insertRows(manager, target, rows, 'ignore', keys)).returned as Array<Pick<T, K>>;
  }

  /**
   * The rows of `target` that match `where`, with the `select` fields only (all when not given),
   * in no particular order unless `o` names one, locked when `o` asks: one statement with one
   * parameter a list (the runtime's listMatch and bindList: `= ANY($n)` on PostgreSQL,
   * `IN (SELECT value FROM json_each(?))` on SQLite), its rows hydrated by EntityRowReader. For
   * the reads of the log ingest and provider events, where TypeORM's `find(… In(…))` (a parameter,
   * and a scan of those made so far, per value; then its general hydration) cost more than the
   * statement.
   */
  async findIn<T extends ObjectLiteral, K extends keyof T & string = keyof T & string>(
    manager: EntityManager,
    target: EntityTarget<T>,
    where: ListMatch<T>,
    select?: readonly K[],
    o: FindInOrder<T> = {},
  ): Promise<Array<Pick<T, K>>> {
    const reader = this.readerOf(manager, target, select);
    const metadata = manager.dataSource.getMetadata(target);
    const driver = manager.dataSource.driver;
    const params: unknown[] = [];
    const conditions = Object.entries(where.in).map(([field, values]) => {
      const column = propertyColumn(metadata, field, 'findIn');
      params.push(this.runtime.bindList(values as ReadonlyArray<string | number>));
      return `t.${driver.escape(column.databaseName)} ${this.runtime.listMatch(driver.normalizeType(column))}`;
    });
    for (const field of where.isNull ?? []) {
      conditions.push(`t.${driver.escape(propertyColumn(metadata, field, 'findIn').databaseName)} IS NULL`);
    }
    let sql = `SELECT ${reader.selectList()} FROM ${driver.escape(metadata.tableName)} t WHERE ${conditions.join(' AND ')}`;
    if (o.orderBy)
      sql += ` ORDER BY t.${driver.escape(propertyColumn(metadata, o.orderBy, 'findIn').databaseName)}`;
    if (o.forUpdate && this.isPostgres) sql += ' FOR UPDATE';
    if (this.isPostgres) sql = numberedPlaceholders(sql);
    const rows = ((await this.structuredQuery(manager, sql, params)).records ?? []) as Array<
      Record<string, unknown>
    >;
    return rows.map((row) => reader.read(Object.values(row)));
  }

  /** findIn's reader of an entity's fields, made once per entity and selection. */
  private readerOf<T extends ObjectLiteral>(
    manager: EntityManager,
    target: EntityTarget<T>,
    select?: ReadonlyArray<keyof T & string>,
  ): EntityRowReader<T> {
    const metadata = manager.dataSource.getMetadata(target);
    const key = `${metadata.name}\n${select?.join(',') ?? '*'}`;
    let reader = this.readers.get(key) as EntityRowReader<T> | undefined;
    if (!reader) {
      const omit = select
        ? metadata.columns
            .map((c) => c.propertyName as keyof T & string)
            .filter((field) => !select.includes(field))
        : [];
      reader = new EntityRowReader(manager.dataSource, target, 't', omit);
      this.readers.set(key, reader);
    }
    return reader;
  }

  private async insertRows<T extends ObjectLiteral>(
    manager: EntityManager,
    target: EntityTarget<T>,
    rows: Array<Partial<T>>,
    conflict: InsertConflict<T>,
    returning?: Array<keyof T & string>,
  ): Promise<{ affected: number; returned: Array<Record<string, unknown>> }> {
    const returned: Array<Record<string, unknown>> = [];
    if (!rows.length) return { affected: 0, returned };
    const metadata = manager.dataSource.getMetadata(target);
    const escape = (name: string) => manager.dataSource.driver.escape(name);
    const columnOf = (property: string) => propertyColumn(metadata, property, 'insertMany');
    // Fields left undefined (an entity's unset generated id) are not written.
    const first = rows[0] as Record<string, unknown>;
    const columns = Object.keys(first)
      .filter((field) => first[field] !== undefined)
      .map(columnOf);
    const table = escape(metadata.tableName);
    const sets = (fields: string[] | undefined, set: (column: string) => string) =>
      (fields ?? []).map((f) => escape(columnOf(f).databaseName)).map(set);
    const onConflict =
      conflict === 'none'
        ? ''
        : conflict === 'ignore'
          ? 'ON CONFLICT DO NOTHING'
          : `ON CONFLICT (${conflict.key.map((k) => escape(columnOf(k).databaseName)).join(', ')}) DO UPDATE SET ` +
            [
              ...sets(conflict.update, (c) => `${c} = excluded.${c}`),
              ...sets(conflict.add, (c) => `${c} = ${table}.${c} + excluded.${c}`),
            ].join(', ');
    const returningColumns = returning?.map(columnOf);
    const tail = returningColumns
      ? ` RETURNING ${returningColumns.map((c) => escape(c.databaseName)).join(', ')}`
      : '';
    const run = async (sql: string, params: unknown[]) => {
      const result = await this.structuredQuery(manager, sql + tail, params);
      if (returningColumns) {
        const records = (result.records ?? []) as Array<Record<string, unknown>>;
        for (const record of records) {
          const row: Record<string, unknown> = {};
          for (const column of returningColumns) row[column.propertyName] = record[column.databaseName];
          returned.push(row);
        }
        return records.length;
      }
      return result.affected ?? 0;
    };
    const driver = manager.dataSource.driver;
    const valueOf = (row: Partial<T>, column: (typeof columns)[number]): unknown =>
      row[column.propertyName as keyof T];
    const head = `INSERT INTO ${table} (${columns.map((c) => escape(c.databaseName)).join(', ')}) `;
    let affected = 0;
    if (this.isPostgres) {
      // One array per column through unnest: a short statement with as many parameters as there are
      // columns, where a VALUES list of hundreds of rows costs PostgreSQL more to parse and bind
      // than to insert.
      const unnest = columns.map((c, n) => `$${n + 1}::${driver.normalizeType(c)}[]`).join(', ');
      for (const chunk of chunks(rows, PG_ROWS_PER_STATEMENT)) {
        const params = columns.map((column) =>
          pgColumn(
            driver,
            column,
            chunk.map((row) => valueOf(row, column)),
          ),
        );
        affected += await run(`${head}SELECT * FROM unnest(${unnest}) ${onConflict}`, params);
      }
      return { affected, returned };
    }
    // Bound parameters per statement: SQLite allows 32,766.
    const perStatement = Math.max(1, Math.floor(30_000 / columns.length));
    for (const chunk of chunks(rows, perStatement)) {
      const params: unknown[] = [];
      const values = chunk.map((row) => {
        const marks = columns.map((column) => {
          params.push(boundValue(driver, valueOf(row, column), column));
          return '?';
        });
        return `(${marks.join(', ')})`;
      });
      affected += await run(`${head}VALUES ${values.join(', ')} ${onConflict}`, params);
    }
    return { affected, returned };
  }

  /**
   * Adds to counter columns of the rows with the given keys, creating each row at its first count:
   * `INSERT … ON CONFLICT (key) DO UPDATE SET n = n + excluded.n`, one atomic statement for all of
   * them (never read-modify-write). Every row names the same key columns (a primary or unique key)
   * and counters; keys must differ. Rows are written in key order, so two transactions adding to
   * the same rows lock them in the same order and cannot deadlock.
   */
  async addToCounters<T extends ObjectLiteral>(
    manager: EntityManager,
    target: EntityTarget<T>,
    rows: Array<{ key: Partial<T>; add: Partial<Record<keyof T & string, number>> }>,
  ): Promise<void> {
    if (!rows.length) return;
    const keyFields = Object.keys(rows[0].key) as Array<keyof T & string>;
    const sortKey = (row: (typeof rows)[number]) => JSON.stringify(keyFields.map((f) => row.key[f]));
    const sorted = rows
      .map((row) => ({ row, order: sortKey(row) }))
      .sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
    await this.insertMany(
      manager,
      target,
      sorted.map(({ row }) => ({ ...row.key, ...row.add })),
      { key: keyFields, add: Object.keys(rows[0].add) },
    );
  }

  /**
   * Claims rows of a queue that several processes share, a few per group, in one atomic
   * statement: on PostgreSQL each group's first `limit` ready rows in `order` are read with
   * `FOR UPDATE SKIP LOCKED` (a row another process is claiming is passed over, never waited
   * for) through a LATERAL join, so the work is a few index probes per group however long the
   * queue; on SQLite, where one process claims, one arm per group of a UNION ALL. Each group's
   * first rows are taken before any group's later ones, up to `total`; the rows taken are
   * given `set`. Answers their ids.
   */
  async claimPerGroup<T extends ObjectLiteral>(
    manager: EntityManager,
    target: EntityTarget<T>,
    claim: GroupedClaim<T>,
  ): Promise<number[]> {
    // On SQLite a group without room stays in the statement (LIMIT 0): the same groups make the
    // same statement text, which is prepared once.
    const groups = this.isPostgres ? claim.groups.filter((g) => g.limit > 0) : claim.groups;
    if (!groups.some((g) => g.limit > 0) || claim.total <= 0) return [];
    const metadata = manager.dataSource.getMetadata(target);
    const driver = manager.dataSource.driver;
    const escape = (name: string) => driver.escape(name);
    const table = escape(metadata.tableName);
    const columnOf = (property: string) => propertyColumn(metadata, property, 'claimPerGroup');
    const id = escape(metadata.primaryColumns[0].databaseName);
    const group = escape(columnOf(claim.group).databaseName);
    const setParameters: Record<string, unknown> = {};
    const sets = Object.keys(claim.set).map((field, n) => {
      const column = columnOf(field);
      setParameters[`set${n}`] = boundValue(driver, claim.set[field as keyof T], column);
      return `${escape(column.databaseName)} = :set${n}`;
    });
    const run = async (sql: string, parameters: Record<string, unknown>): Promise<number[]> => {
      const [query, bound] = driver.escapeQueryWithParameters(sql, {
        ...claim.parameters,
        ...setParameters,
        ...parameters,
      });
      const result = await this.structuredQuery(manager, query, bound);
      return ((result.records ?? []) as Array<Record<string, unknown>>).map((row) =>
        Number(row[metadata.primaryColumns[0].databaseName]),
      );
    };
    const order = claim.order.map((field) => `q.${escape(columnOf(field).databaseName)}`);
    const orderAliases = order.map((_, n) => `o${n}`).join(', ');
    const ordered = order.map((column, n) => `${column} AS o${n}`).join(', ');
    const ranked = (picked: string) =>
      `SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY grp ORDER BY ${orderAliases}) AS rn
       FROM (${picked}) p) r ORDER BY rn, id LIMIT :total`;

    if (this.isPostgres) {
      const picked = `SELECT c.*, g.value AS grp
        FROM unnest(CAST(:groupValues AS integer[]), CAST(:groupLimits AS integer[])) AS g(value, lim)
        CROSS JOIN LATERAL (
          SELECT q.${id} AS id, ${ordered} FROM ${table} q WHERE q.${group} = g.value AND (${claim.ready})
          ORDER BY ${order.join(', ')} LIMIT g.lim FOR UPDATE SKIP LOCKED
        ) c`;
      return run(
        `WITH chosen AS (${ranked(picked)})
         UPDATE ${table} SET ${sets.join(', ')} FROM chosen WHERE ${table}.${id} = chosen.id
         RETURNING ${table}.${id}`,
        {
          groupValues: groups.map((g) => g.value),
          groupLimits: groups.map((g) => g.limit),
          total: claim.total,
        },
      );
    }
    const claimed: number[] = [];
    for (const part of chunks(groups, SQLITE_GROUPS_PER_STATEMENT)) {
      const total = claim.total - claimed.length;
      if (total <= 0) break;
      const parameters: Record<string, unknown> = { total: this.boundInteger(total) };
      const arms = part.map((g, n) => {
        parameters[`group${n}`] = this.boundInteger(g.value);
        parameters[`limit${n}`] = this.boundInteger(Math.max(0, g.limit));
        return `SELECT * FROM (SELECT q.${id} AS id, q.${group} AS grp, ${ordered} FROM ${table} q
          WHERE q.${group} = :group${n} AND (${claim.ready}) ORDER BY ${order.join(', ')} LIMIT :limit${n})`;
      });
      claimed.push(
        ...(await run(
          `UPDATE ${table} SET ${sets.join(', ')} WHERE ${id} IN (${ranked(arms.join(' UNION ALL '))})
           RETURNING ${id}`,
          parameters,
        )),
      );
    }
    return claimed;
  }

  /**
   * Claims up to `total` ready rows of a queue that several processes share, first in `order`,
   * in one atomic statement (on PostgreSQL read with `FOR UPDATE SKIP LOCKED`: a row another
   * process is claiming is passed over, never waited for), giving them `set` (a value given as a
   * function is SQL over the row, as in TypeORM's own update: `() => "CASE … END"`). Answers their ids.
   */
  async claimReady<T extends ObjectLiteral>(
    manager: EntityManager,
    target: EntityTarget<T>,
    claim: Omit<GroupedClaim<T>, 'group' | 'groups' | 'set'> & {
      set: { [K in keyof T]?: T[K] | (() => string) };
    },
  ): Promise<number[]> {
    if (claim.total <= 0) return [];
    const metadata = manager.dataSource.getMetadata(target);
    const driver = manager.dataSource.driver;
    const escape = (name: string) => driver.escape(name);
    const table = escape(metadata.tableName);
    const column = (property: string) => propertyColumn(metadata, property, 'claimReady');
    const idName = metadata.primaryColumns[0].databaseName;
    const id = escape(idName);
    const parameters: Record<string, unknown> = {
      ...claim.parameters,
      total: this.boundInteger(claim.total),
    };
    const sets = Object.keys(claim.set).map((field, n) => {
      const value = claim.set[field as keyof T];
      const name = escape(column(field).databaseName);
      if (typeof value === 'function') return `${name} = ${(value as () => string)()}`;
      parameters[`set${n}`] = boundValue(driver, value, column(field));
      return `${name} = :set${n}`;
    });
    const order = claim.order.map((field) => `q.${escape(column(field).databaseName)}`).join(', ');
    const chosen = `SELECT q.${id} FROM ${table} q WHERE ${claim.ready} ORDER BY ${order} LIMIT :total${
      this.isPostgres ? ' FOR UPDATE SKIP LOCKED' : ''
    }`;
    const [query, bound] = driver.escapeQueryWithParameters(
      `UPDATE ${table} SET ${sets.join(', ')} WHERE ${id} IN (${chosen}) RETURNING ${id}`,
      parameters,
    );
    const result = await this.structuredQuery(manager, query, bound);
    return ((result.records ?? []) as Array<Record<string, unknown>>).map((row) => Number(row[idName]));
  }

  /**
   * Updates many rows, each with values of its own, in one statement: every row gives the same
   * `match` fields (which find it) and `set` fields (what it becomes). A row whose match finds
   * nothing is passed over, and so is one whose `o.isNull` fields are not all NULL; `add` fields
   * are added to the row's own values. Answers the `returning` field of each row updated.
   * PostgreSQL gets one array per field (`FROM unnest(…)`), SQLite a VALUES list (`UPDATE … FROM`). Values are
   * bound as insertMany binds them; no listener runs (give `updatedAt` when it should move).
   */
  async updateEach<T extends ObjectLiteral, K extends keyof T & string>(
    manager: EntityManager,
    target: EntityTarget<T>,
    rows: ReadonlyArray<RowUpdate<T>>,
    returning: K,
    o: { isNull?: Array<keyof T & string> } = {},
  ): Promise<Array<T[K]>> {
    if (rows.length === 0) return [];
    const metadata = manager.dataSource.getMetadata(target);
    const driver = manager.dataSource.driver;
    const escape = (name: string) => driver.escape(name);
    const table = escape(metadata.tableName);
    const columnOf = (property: string) => propertyColumn(metadata, property, 'updateEach');
    const fields = [
      ...Object.keys(rows[0].match).map((f) => ({ f, part: 'match' as const, name: `m${f}` })),
      ...Object.keys(rows[0].set).map((f) => ({ f, part: 'set' as const, name: `s${f}` })),
      ...Object.keys(rows[0].add ?? {}).map((f) => ({ f, part: 'add' as const, name: `a${f}` })),
    ].map((x) => ({ ...x, column: columnOf(x.f) }));
    const names = fields.map((x) => escape(x.name)).join(', ');
    const valueOf = (row: RowUpdate<T>, x: (typeof fields)[number]): unknown =>
      (row[x.part] as Partial<T> | undefined)?.[x.f as keyof T];
    const assignments = fields
      .filter((x) => x.part !== 'match')
      .map((x) => {
        const column = escape(x.column.databaseName);
        return x.part === 'add'
          ? `${column} = ${table}.${column} + v.${escape(x.name)}`
          : `${column} = v.${escape(x.name)}`;
      })
      .join(', ');
    const matches = [
      ...fields
        .filter((x) => x.part === 'match')
        .map((x) => `${table}.${escape(x.column.databaseName)} = v.${escape(x.name)}`),
      ...(o.isNull ?? []).map((f) => `${table}.${escape(columnOf(f).databaseName)} IS NULL`),
    ].join(' AND ');
    const returned = columnOf(returning).databaseName;
    const tail = `UPDATE ${table} SET ${assignments} FROM v WHERE ${matches} RETURNING ${table}.${escape(returned)}`;
    const out: Array<T[K]> = [];
    const perStatement = this.isPostgres ? PG_ROWS_PER_STATEMENT : Math.floor(30_000 / fields.length);
    for (const chunk of chunks(rows, perStatement)) {
      let sql: string;
      let params: unknown[];
      if (this.isPostgres) {
        const arrays = fields.map((x, n) => `$${n + 1}::${driver.normalizeType(x.column)}[]`).join(', ');
        sql = `WITH v(${names}) AS (SELECT * FROM unnest(${arrays})) ${tail}`;
        params = fields.map((x) =>
          pgColumn(
            driver,
            x.column,
            chunk.map((row) => valueOf(row, x)),
          ),
        );
      } else {
        params = [];
        const values = chunk.map(
          (row) =>
            `(${fields.map((x) => (params.push(boundValue(driver, valueOf(row, x), x.column)), '?')).join(', ')})`,
        );
        sql = `WITH v(${names}) AS (VALUES ${values.join(', ')}) ${tail}`;
      }
      const result = await this.structuredQuery(manager, sql, params);
      for (const record of (result.records ?? []) as Array<Record<string, unknown>>)
        out.push(record[returned] as T[K]);
    }
    return out;
  }

  /**
   * SQL text of the UTC day (`YYYY-MM-DD`) or month (`YYYY-MM`) of a timestamp column, for
   * grouping a series. `column` is SQL (`billing.paid_at`). SQLite stores timestamps as
   * `YYYY-MM-DD HH:MM:SS.SSS` in UTC, so there the period is a prefix of the stored text.
   */
  utcPeriod(column: string, unit: PeriodUnit): string {
    if (this.isPostgres) {
      const format = unit === 'month' ? 'YYYY-MM' : 'YYYY-MM-DD';
      return `to_char(${column} AT TIME ZONE 'UTC', '${format}')`;
    }
    return `substr(${column}, 1, ${unit === 'month' ? 7 : 10})`;
  }

  /** SQL text of what follows the first `@` of a text column: the domain of an e-mail address. */
  domainOf(column: string): string {
    return this.isPostgres ? `split_part(${column}, '@', 2)` : `substr(${column}, instr(${column}, '@') + 1)`;
  }

  /**
   * Serialises the transactions of `em` that take the lock `name` (e.g. the domains of one
   * company) until they commit or roll back, without locking any row: a transaction-level advisory
   * lock on PostgreSQL (LOCK_NAMESPACE, lockKey(name)); nothing on SQLite, whose transactions run
   * one at a time.
   */
  async lockName(em: EntityManager, name: string): Promise<void> {
    if (!this.isPostgres) return;
    await em.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_NAMESPACE, lockKey(name)]);
  }

  /**
   * Runs `work` while holding the lock `name` across every replica sharing the database, or
   * skips it when another session holds the lock. On PostgreSQL a session advisory lock
   * (LOCK_NAMESPACE, lockKey(name)), taken and released on one dedicated connection; SQLite
   * is one process's file, so there the work simply runs.
   */
  async withNamedLock<T>(name: string, work: () => Promise<T>): Promise<NamedLockOutcome<T>> {
    if (!this.isPostgres) return { acquired: true, result: await work() };

    // A session-level lock belongs to one connection: lock and unlock on the same one.
    const runner = this.dataSource.createQueryRunner();
    const keys = [LOCK_NAMESPACE, lockKey(name)];
    let unlockError: unknown;
    try {
      await runner.connect();
      const rows = (await runner.query('SELECT pg_try_advisory_lock($1, $2) AS locked', keys)) as LockRow[];
      if (!rows[0]?.locked) return { acquired: false };
      try {
        return { acquired: true, result: await work() };
      } finally {
        try {
          await runner.query('SELECT pg_advisory_unlock($1, $2)', keys);
        } catch (err: unknown) {
          unlockError = err;
          this.logger.error({ err, lock: name }, `Lock ${name}: advisory unlock failed`);
        }
      }
    } finally {
      // A connection that may still hold the lock is destroyed, never handed back to the pool.
      if (unlockError)
        await (runner as unknown as ReleasableWithError).releasePostgresConnection(unlockError);
      else await runner.release();
    }
  }

  /**
   * An integer parameter that stays a parameter: TypeORM writes a number into SQLite's SQL text,
   * which makes a new statement (prepared again) for every value; a BigInt is bound.
   */
  private boundInteger(value: number): number | bigint {
    return this.isPostgres ? value : BigInt(value);
  }

  /** Runs SQL on the manager's connection (its transaction's, if any) and answers the driver's structured result. */
  private async structuredQuery(
    manager: EntityManager,
    sql: string,
    parameters: unknown[],
  ): Promise<QueryResult> {
    const own: QueryRunner | undefined = manager.queryRunner
      ? undefined
      : manager.dataSource.createQueryRunner();
    const runner = manager.queryRunner ?? own!;
    try {
      return await runner.query(sql, parameters, true);
    } finally {
      await own?.release();
    }
  }
}
