import DataLoader from 'dataloader';
import type { MaybePromise } from '../common/maybe-promise';

/** Calls per statement of a batched query. */
const MAX_BATCH = 100;

/**
 * A read whose calls each take their own parameters and answer their own result (a page of a
 * list: a company, a filter, a limit and an offset; many rows), run the way each database is
 * fastest: on PostgreSQL the calls of concurrent callers share one statement (`many`, given every
 * call's parameters in order and answering one result per call in that order, through
 * DataLoader); on SQLite each call runs alone at once (`each`, synchronous when the driver is).
 * BatchedRead is the same for lookups by key (at most one row per key); this is for reads that
 * are not.
 *
 * Nothing is kept (`cache: false`) and equal calls are not merged: every caller gets a result
 * read after its own call began. Batches are dispatched on `setImmediate`, not DataLoader's
 * default microtask, so that the requests parsed in one poll phase share a statement: under load
 * each round trip to PostgreSQL (the pg client's socket write, the reply's parsing, the pool's
 * hand-over) costs the service more than the indexed read itself.
 */
export class BatchedQuery<Params, Result> {
  private readonly loader?: DataLoader<Params, Result>;

  constructor(
    transactions: { readonly isPostgres: boolean },
    private readonly forms: {
      many: (calls: Params[]) => Promise<Result[]>;
      each: (call: Params) => MaybePromise<Result>;
    },
  ) {
    if (!transactions.isPostgres) return;
    this.loader = new DataLoader<Params, Result>(
      async (calls) => {
        const results = await forms.many([...calls]);
        if (results.length !== calls.length)
          throw new Error(`BatchedQuery: ${results.length} results for ${calls.length} calls`);
        return results;
      },
      { cache: false, maxBatchSize: MAX_BATCH, batchScheduleFn: (dispatch) => setImmediate(dispatch) },
    );
  }

  /** The result of this call: a promise on PostgreSQL; on SQLite whatever `each` answers. */
  run(params: Params): MaybePromise<Result> {
    return this.loader ? this.loader.load(params) : this.forms.each(params);
  }
}
