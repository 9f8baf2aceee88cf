import { BatchedLookup, BatchedRead } from './batched-lookup';

type Row = readonly [string, number];

/** A fetch that records each batch of keys and answers a row for every key it knows. */
function recordingFetch(known: Record<string, number>) {
  const batches: string[][] = [];
  const fetch = (keys: string[]): Promise<Row[]> => {
    batches.push(keys);
    return Promise.resolve(keys.filter((k) => k in known).map((k): Row => [k, known[k]]));
  };
  return { batches, fetch };
}

describe('BatchedLookup', () => {
  it('answers lookups made in the same turn with one fetch of the distinct keys', async () => {
    const { batches, fetch } = recordingFetch({ a: 1, b: 2 });
    const lookup = new BatchedLookup<Row>(fetch);
    const rows = await Promise.all([lookup.load('a'), lookup.load('b'), lookup.load('a'), lookup.load('x')]);
    expect(rows).toEqual([['a', 1], ['b', 2], ['a', 1], undefined]);
    expect(batches).toEqual([['a', 'b', 'x']]);
  });

  it('fetches again for lookups made after a batch has gone: nothing is kept', async () => {
    const known: Record<string, number> = { a: 1 };
    const { batches, fetch } = recordingFetch(known);
    const lookup = new BatchedLookup<Row>(fetch);
    expect(await lookup.load('a')).toEqual(['a', 1]);
    known.a = 2;
    expect(await lookup.load('a')).toEqual(['a', 2]);
    expect(batches).toEqual([['a'], ['a']]);
  });

  it('splits at the batch size', async () => {
    const { batches, fetch } = recordingFetch({ a: 1, b: 2, c: 3 });
    const lookup = new BatchedLookup<Row>(fetch, 2);
    const rows = await Promise.all(['a', 'b', 'c'].map((k) => lookup.load(k)));
    expect(rows).toEqual([
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]);
    expect(batches).toEqual([['a', 'b'], ['c']]);
  });

  it('rejects every waiter of a failed batch, and the next batch works', async () => {
    let fail = true;
    const lookup = new BatchedLookup<Row>((keys) =>
      fail ? Promise.reject(new Error('connection lost')) : Promise.resolve(keys.map((k): Row => [k, 0])),
    );
    const results = await Promise.allSettled([lookup.load('a'), lookup.load('b'), lookup.load('a')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    fail = false;
    expect(await lookup.load('a')).toEqual(['a', 0]);
  });
});

describe('BatchedRead', () => {
  const forms = () => {
    const calls: Array<{ form: 'many' | 'each'; keys: string[] }> = [];
    const rows = (keys: string[]) => keys.filter((k) => k !== 'missing').map((k): Row => [k, k.length]);
    return {
      calls,
      many: (keys: string[]) => {
        calls.push({ form: 'many', keys });
        return Promise.resolve(rows(keys));
      },
      each: (keys: string[]) => {
        calls.push({ form: 'each', keys });
        return rows(keys);
      },
    };
  };

  it('where statements are round trips, answers concurrent calls from one read of all their keys', async () => {
    const f = forms();
    const read = new BatchedRead<Row>({ isPostgres: true }, f);
    const [first, second] = await Promise.all([read.load(['a', 'bb']), read.load(['bb', 'missing', 'ccc'])]);
    expect([...first]).toEqual([
      ['a', ['a', 1]],
      ['bb', ['bb', 2]],
    ]);
    expect([...second]).toEqual([
      ['bb', ['bb', 2]],
      ['ccc', ['ccc', 3]],
    ]);
    expect(f.calls).toEqual([{ form: 'many', keys: ['a', 'bb', 'missing', 'ccc'] }]);
  });

  it('in-process, answers each call at once from its own keys, without a promise', () => {
    const f = forms();
    const read = new BatchedRead<Row>({ isPostgres: false }, f);
    const answer = read.load(['a', 'missing']);
    expect(answer).toBeInstanceOf(Map);
    expect([...(answer as Map<string, Row>)]).toEqual([['a', ['a', 1]]]);
    expect(f.calls).toEqual([{ form: 'each', keys: ['a', 'missing'] }]);
  });
});
