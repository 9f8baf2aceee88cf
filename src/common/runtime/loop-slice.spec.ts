import { setImmediate as nextTurn } from 'node:timers/promises';
import { countTurns } from '../../../test/support/loop-turns';
import { LoopSlice } from './loop-slice';

describe('LoopSlice', () => {
  it('lets work in while the slice of this turn is young, and opens a new slice in the next turn', async () => {
    const slice = new LoopSlice(60_000);
    expect(slice.enter()).toBe(true);
    expect(slice.enter()).toBe(true);
    slice.sliceMs = 0;
    expect(slice.enter()).toBe(false);
    await nextTurn();
    expect(slice.enter()).toBe(true);
    expect(slice.enter()).toBe(false);
  });

  it('makes work wait for a later turn once the slice is spent, in the order it came', async () => {
    const slice = new LoopSlice(0);
    const order: string[] = [];
    const turns = countTurns();
    const began: Array<[string, number]> = [];
    await Promise.all(
      ['a', 'b', 'c'].map(async (name) => {
        await new Promise<void>((go) => slice.whenAllowed(go));
        began.push([name, turns.now]);
      }),
    );
    slice.whenAllowed(() => order.push('callback'));
    turns.stop();
    expect(began.map(([name]) => name)).toEqual(['a', 'b', 'c']);
    expect(new Set(began.map(([, at]) => at)).size).toBe(3);
    // The slice of the turn the three ended in is spent: the callback waited for the next.
    expect(order).toEqual([]);
    await nextTurn();
    await nextTurn();
    expect(order).toEqual(['callback']);
  });

  it('spends nothing while a turn is young', () => {
    const slice = new LoopSlice(60_000);
    let ran = 0;
    for (let n = 0; n < 100; n++) slice.whenAllowed(() => ran++);
    expect(ran).toBe(100);
  });
});
