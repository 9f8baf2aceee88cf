import DataLoader from 'dataloader';

/** Calls per statement of a batched query. */
const MAX_BATCH = 100;

/**
 * A statement by call on PostgreSQL (a page of a list: a company, a filter, a limit and an
 * offset; the rows one request stores): the calls of concurrent callers share one statement
 * (`many`, given every call's parameters in order and answering one result per call in that
 * order, through DataLoader; an Error in a call's place rejects that call alone). BatchedRead is
 * the same for lookups by key (at most one row per key); this is for statements that are not.
 *
 * Nothing is kept (`cache: false`) and equal calls are not merged: every caller gets a result
 * read (or a write made) after its own call began. Batches are dispatched on `setImmediate`, not
 * DataLoader's default microtask, so that the requests parsed in one poll phase share a
 * statement: under load each round trip to PostgreSQL (the pg client's socket write, the reply's
 * parsing, the pool's hand-over) costs the service more than the indexed read itself.
 */
export class BatchedQuery<Params, Result> {
  private readonly loader: DataLoader<Params, Result>;

  constructor(many: (calls: Params[]) => Promise<Array<Result | Error>>) {
    this.loader = new DataLoader<Params, Result>(
      async (calls) => {
        const results = await many([...calls]);
        if (results.length !== calls.length)
          throw new Error(`BatchedQuery: ${results.length} results for ${calls.length} calls`);
        return results;
      },
      { cache: false, maxBatchSize: MAX_BATCH, batchScheduleFn: (dispatch) => setImmediate(dispatch) },
    );
  }

  run(params: Params): Promise<Result> {
    return this.loader.load(params);
  }
}
