/**
 * Puts the app's clock in the test's hands: only `Date` is faked (timers, setImmediate and I/O
 * run as usual, so servers, drivers and peers work), and it stands still at `now` until `set`
 * moves it. Undo with `jest.useRealTimers()`.
 */
export function fakeDateAt(now: number): { set: (ms: number) => void } {
  jest.useFakeTimers({
    now,
    // Everything but Date stays real.
    doNotFake: [
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'setImmediate',
      'clearImmediate',
      'setInterval',
      'clearInterval',
      'setTimeout',
      'clearTimeout',
    ],
  });
  return { set: (ms) => jest.setSystemTime(ms) };
}
