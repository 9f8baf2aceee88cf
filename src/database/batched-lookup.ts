import { MaybePromise, then } from '../common/maybe-promise';

/**
 * Coalesces lookups by key that arrive in the same turn of the event loop into one query, as
 * DataLoader does, without keeping anything afterwards: every caller gets a row read after its
 * own call began. Under load a round trip to PostgreSQL costs the service far more than the
 * indexed read itself (socket write, reply parsing, pool hand-over), so fifty concurrent
 * requests cost one round trip instead of fifty.
 *
 * `fetch` answers the rows for a set of distinct keys, each row carrying its key at index 0.
 */
export class BatchedLookup<Row extends readonly unknown[]> {
  private pending = new Map<string, Waiter<Row>[]>();
  private scheduled = false;

  constructor(
    private readonly fetch: (keys: string[]) => Promise<Row[]>,
    private readonly maxBatch = 100,
  ) {}

  load(key: string): Promise<Row | undefined> {
    return new Promise((resolve, reject) => {
      const waiters = this.pending.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else this.pending.set(key, [{ resolve, reject }]);
      if (this.pending.size >= this.maxBatch) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        // setImmediate, not a microtask: requests parsed in the same poll phase join the batch.
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    if (batch.size === 0) return;
    this.pending = new Map();
    this.fetch([...batch.keys()]).then(
      (rows) => {
        for (const row of rows) {
          const waiters = batch.get(row[0] as string);
          batch.delete(row[0] as string);
          waiters?.forEach((w) => w.resolve(row));
        }
        for (const waiters of batch.values()) waiters.forEach((w) => w.resolve(undefined));
      },
      (error: unknown) => {
        for (const waiters of batch.values()) waiters.forEach((w) => w.reject(error));
      },
    );
  }
}

interface Waiter<Row> {
  resolve(row: Row | undefined): void;
  reject(error: unknown): void;
}

/**
 * A lookup of keys that runs the way each database is fastest: on PostgreSQL, where every
 * statement is a round trip, the keys of concurrent callers share one statement (`many`, through
 * BatchedLookup); on SQLite, which answers in-process, each call reads its own keys at once
 * (`each`, synchronous unless an open transaction holds the connection). Both forms answer
 * rows with their key at index 0, at most one per key.
 */
export class BatchedRead<Row extends readonly unknown[]> {
  private readonly batch?: BatchedLookup<Row>;

  constructor(
    transactions: { readonly isPostgres: boolean },
    private readonly forms: {
      many: (keys: string[]) => Promise<Row[]>;
      each: (keys: string[]) => MaybePromise<Row[]>;
    },
  ) {
    if (transactions.isPostgres) this.batch = new BatchedLookup(forms.many);
  }

  /** The row of each key found. */
  load(keys: readonly string[]): MaybePromise<Map<string, Row>> {
    const byKey = (rows: ReadonlyArray<Row | undefined>) => {
      const found = new Map<string, Row>();
      for (const row of rows) if (row) found.set(row[0] as string, row);
      return found;
    };
    const batch = this.batch;
    if (!batch) return then(this.forms.each([...keys]), byKey);
    return Promise.all(keys.map((key) => batch.load(key))).then(byKey);
  }
}
