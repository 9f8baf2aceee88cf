import DataLoader from 'dataloader';
import { MaybePromise, andThen } from '../common/maybe-promise';

/** Keys per statement of a batched lookup. */
const MAX_BATCH = 100;

/**
 * A lookup of keys that runs the way each database is fastest: on PostgreSQL, where every
 * statement is a round trip, the keys of concurrent callers share one statement (`many`, through
 * DataLoader); on SQLite, which answers in-process, each call reads its own keys at once
 * (`each`, synchronous unless an open transaction holds the connection). Both forms answer
 * rows with their key at index 0, at most one per key.
 *
 * The loader keeps nothing (`cache: false`): every caller gets a row read after its own call
 * began. Under load a round trip to PostgreSQL costs the service far more than the indexed read
 * itself (socket write, reply parsing, pool hand-over), so fifty concurrent requests cost one
 * round trip instead of fifty. Batches are dispatched on `setImmediate`, not DataLoader's default
 * microtask: requests parsed in the same poll phase join the batch.
 */
export class BatchedRead<Row extends readonly unknown[]> {
  private readonly loader?: DataLoader<string, Row | undefined>;

  constructor(
    transactions: { readonly isPostgres: boolean },
    private readonly forms: {
      many: (keys: string[]) => Promise<Row[]>;
      each: (keys: string[]) => MaybePromise<Row[]>;
    },
  ) {
    if (!transactions.isPostgres) return;
    this.loader = new DataLoader(
      async (keys) => {
        // Without a cache DataLoader hands over a key as often as it was asked for.
        const found = byKey(await forms.many([...new Set(keys)]));
        return keys.map((key) => found.get(key));
      },
      { cache: false, maxBatchSize: MAX_BATCH, batchScheduleFn: (dispatch) => setImmediate(dispatch) },
    );
  }

  /** The row of each key found. */
  load(keys: readonly string[]): MaybePromise<Map<string, Row>> {
    const loader = this.loader;
    if (!loader) return andThen(this.forms.each([...keys]), byKey);
    return Promise.all(keys.map((key) => loader.load(key))).then(byKey);
  }
}

/** Rows by their key (index 0); absent rows skipped. */
function byKey<Row extends readonly unknown[]>(rows: ReadonlyArray<Row | undefined>): Map<string, Row> {
  const found = new Map<string, Row>();
  for (const row of rows) if (row) found.set(row[0] as string, row);
  return found;
}
