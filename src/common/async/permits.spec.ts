import { Permits } from './permits';

/** A promise resolved from outside, to hold work open until the test lets it finish. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Lets every settled promise's continuations run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('Permits', () => {
  it('runs at most `size` works at once; the others wait, and start in arrival order', async () => {
    const permits = new Permits(2);
    const gates = [gate(), gate(), gate(), gate()];
    const started: number[] = [];
    const runs = gates.map((g, i) =>
      permits.run(async () => {
        started.push(i);
        await g.promise;
        return i;
      }),
    );
    await settle();
    expect(started).toEqual([0, 1]);
    expect({ taken: permits.taken, queued: permits.queued }).toEqual({ taken: 2, queued: 2 });

    gates[1].open();
    await settle();
    expect(started).toEqual([0, 1, 2]);
    gates[0].open();
    await settle();
    expect(started).toEqual([0, 1, 2, 3]);
    gates[2].open();
    gates[3].open();
    await expect(Promise.all(runs)).resolves.toEqual([0, 1, 2, 3]);
    expect({ taken: permits.taken, queued: permits.queued }).toEqual({ taken: 0, queued: 0 });
  });

  it('releases the permit of work that throws, and passes the error on', async () => {
    const permits = new Permits(1);
    const held = gate();
    const failing = permits.run(async () => {
      await held.promise;
      throw new Error('down');
    });
    const next = permits.run(() => Promise.resolve('next'));
    await settle();
    expect(permits.queued).toBe(1);
    held.open();
    await expect(failing).rejects.toThrow('down');
    await expect(next).resolves.toBe('next');
    expect(permits.taken).toBe(0);
  });

  it('refuses a size that is not a positive integer', () => {
    expect(() => new Permits(0)).toThrow(RangeError);
    expect(() => new Permits(1.5)).toThrow(RangeError);
  });
});
