import { BatchedRead } from './batched-read';

type Row = readonly [string, number];

/** A batched read, recording each call and answering a row for every key it knows. */
function forms(known: Record<string, number> = {}, fail?: () => boolean) {
  const calls: Array<{ form: 'many'; keys: string[] }> = [];
  const rows = (keys: string[]) => keys.filter((k) => k in known).map((k): Row => [k, known[k]]);
  return {
    calls,
    many: (keys: string[]) => {
      calls.push({ form: 'many', keys });
      return fail?.() ? Promise.reject(new Error('connection lost')) : Promise.resolve(rows(keys));
    },
  };
}

describe('BatchedRead where statements are round trips (DataLoader)', () => {
  it('answers concurrent calls from one read of all their distinct keys', async () => {
    const f = forms({ a: 1, bb: 2, ccc: 3 });
    const read = new BatchedRead<Row>(f.many);
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

  it('joins calls made in the same poll phase (setImmediate), not only in the same microtask queue', async () => {
    const f = forms({ a: 1, b: 2 });
    const read = new BatchedRead<Row>(f.many);
    const first = read.load(['a']);
    // Past DataLoader's own schedule (a microtask, then process.nextTick), still before setImmediate.
    for (let n = 0; n < 3; n++) await new Promise((resolve) => process.nextTick(resolve));
    const second = read.load(['b']);
    await Promise.all([first, second]);
    expect(f.calls).toEqual([{ form: 'many', keys: ['a', 'b'] }]);
  });

  it('reads again for calls made after a batch has gone: nothing is kept', async () => {
    const known: Record<string, number> = { a: 1 };
    const f = forms(known);
    const read = new BatchedRead<Row>(f.many);
    expect((await read.load(['a'])).get('a')).toEqual(['a', 1]);
    known.a = 2;
    expect((await read.load(['a'])).get('a')).toEqual(['a', 2]);
    expect(f.calls.map((c) => c.keys)).toEqual([['a'], ['a']]);
  });

  it('splits at 100 keys a statement', async () => {
    const keys = Array.from({ length: 150 }, (_, n) => `k${n}`);
    const f = forms(Object.fromEntries(keys.map((k, n) => [k, n])));
    const read = new BatchedRead<Row>(f.many);
    const found = await read.load(keys);
    expect(found.size).toBe(150);
    expect(f.calls.map((c) => c.keys.length)).toEqual([100, 50]);
  });

  it('rejects every caller of a failed batch, and the next batch works', async () => {
    let fail = true;
    const read = new BatchedRead<Row>(forms({ a: 0, b: 0 }, () => fail).many);
    const results = await Promise.allSettled([read.load(['a']), read.load(['b']), read.load(['a'])]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    fail = false;
    expect([...(await read.load(['a']))]).toEqual([['a', ['a', 0]]]);
  });
});
