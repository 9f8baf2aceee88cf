import DataLoader from 'dataloader';
import { byKey, KeyedRead, ReadRow } from '../database-runtime';

/** Keys per statement of a batched lookup. */
const MAX_BATCH = 100;

/**
 * A lookup by key on PostgreSQL, where every statement is a round trip: the keys of concurrent
 * callers share one statement (`many`, through DataLoader). Rows have their key at index 0, at
 * most one per key.
 *
 * The loader keeps nothing (`cache: false`): every caller gets a row read after its own call
 * began. Under load a round trip to PostgreSQL costs the service far more than the indexed read
 * itself (socket write, reply parsing, pool hand-over), so fifty concurrent requests cost one
 * round trip instead of fifty. Batches are dispatched on `setImmediate`, not DataLoader's default
 * microtask: requests parsed in the same poll phase join the batch.
 */
export class BatchedRead<Row extends ReadRow> implements KeyedRead<Row> {
  private readonly loader: DataLoader<string, Row | undefined>;

  constructor(many: (keys: string[]) => Promise<Row[]>) {
    this.loader = new DataLoader(
      async (keys) => {
        // Without a cache DataLoader hands over a key as often as it was asked for.
        const found = byKey(await many([...new Set(keys)]));
        return keys.map((key) => found.get(key));
      },
      { cache: false, maxBatchSize: MAX_BATCH, batchScheduleFn: (dispatch) => setImmediate(dispatch) },
    );
  }

  async load(keys: readonly string[]): Promise<Map<string, Row>> {
    return byKey(await Promise.all(keys.map((key) => this.loader.load(key))));
  }
}
