import { BatchedQuery } from './batched-query';

type Call = { from: number; count: number };

/** A batched query answering the numbers `from … from + count - 1`, recording each call. */
function forms(fail?: () => boolean) {
  const calls: Array<{ form: 'many'; params: Call[] }> = [];
  const answer = ({ from, count }: Call) => Array.from({ length: count }, (_, n) => from + n);
  return {
    calls,
    many: (params: Call[]) => {
      calls.push({ form: 'many', params });
      return fail?.() ? Promise.reject(new Error('connection lost')) : Promise.resolve(params.map(answer));
    },
  };
}

describe('BatchedQuery where statements are round trips (DataLoader)', () => {
  it('answers concurrent calls from one statement given all their parameters, each with its own result', async () => {
    const f = forms();
    const query = new BatchedQuery<Call, number[]>(f.many);
    const params: Call[] = [
      { from: 1, count: 2 },
      { from: 10, count: 0 },
      { from: 1, count: 2 },
      { from: 7, count: 3 },
    ];
    const results = await Promise.all(params.map((p) => Promise.resolve(query.run(p))));
    expect(results).toEqual([[1, 2], [], [1, 2], [7, 8, 9]]);
    // Equal calls are not merged: each is read for its own caller.
    expect(f.calls).toEqual([{ form: 'many', params }]);
  });

  it('joins calls made in the same poll phase (setImmediate), not only in the same microtask queue', async () => {
    const f = forms();
    const query = new BatchedQuery<Call, number[]>(f.many);
    const first = query.run({ from: 1, count: 1 });
    for (let n = 0; n < 3; n++) await new Promise((resolve) => process.nextTick(resolve));
    const second = query.run({ from: 2, count: 1 });
    expect(await Promise.all([first, second])).toEqual([[1], [2]]);
    expect(f.calls.map((c) => c.form)).toEqual(['many']);
    expect(f.calls[0].params).toHaveLength(2);
  });

  it('runs again for calls made after a batch has gone: nothing is kept', async () => {
    const f = forms();
    const query = new BatchedQuery<Call, number[]>(f.many);
    expect(await query.run({ from: 1, count: 1 })).toEqual([1]);
    expect(await query.run({ from: 1, count: 1 })).toEqual([1]);
    expect(f.calls.map((c) => c.params.length)).toEqual([1, 1]);
  });

  it('splits at 100 calls a statement', async () => {
    const f = forms();
    const query = new BatchedQuery<Call, number[]>(f.many);
    const results = await Promise.all(
      Array.from({ length: 150 }, (_, n) => Promise.resolve(query.run({ from: n, count: 1 }))),
    );
    expect(results).toEqual(Array.from({ length: 150 }, (_, n) => [n]));
    expect(f.calls.map((c) => c.params.length)).toEqual([100, 50]);
  });

  it('rejects every caller of a failed batch, and the next batch works', async () => {
    let fail = true;
    const query = new BatchedQuery<Call, number[]>(forms(() => fail).many);
    const results = await Promise.allSettled([
      query.run({ from: 1, count: 1 }),
      query.run({ from: 2, count: 1 }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await query.run({ from: 3, count: 1 })).toEqual([3]);
  });

  it('rejects only the call answered with an Error in its place; the others get their results', async () => {
    const refused = new Error('value too long for the column');
    const query = new BatchedQuery<Call, number[]>((params) =>
      Promise.resolve(params.map((p) => (p.from === 2 ? refused : [p.from]))),
    );
    const results = await Promise.allSettled([
      query.run({ from: 1, count: 1 }),
      query.run({ from: 2, count: 1 }),
      query.run({ from: 3, count: 1 }),
    ]);
    expect(results).toEqual([
      { status: 'fulfilled', value: [1] },
      { status: 'rejected', reason: refused },
      { status: 'fulfilled', value: [3] },
    ]);
  });

  it('rejects every caller when the statement answers a different number of results', async () => {
    const query = new BatchedQuery<Call, number[]>(() => Promise.resolve([[1]]));
    const results = await Promise.allSettled([
      query.run({ from: 1, count: 1 }),
      query.run({ from: 2, count: 1 }),
    ]);
    expect(results).toEqual([
      { status: 'rejected', reason: new Error('BatchedQuery: 1 results for 2 calls') },
      { status: 'rejected', reason: new Error('BatchedQuery: 1 results for 2 calls') },
    ]);
  });
});
