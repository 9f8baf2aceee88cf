import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Waits until `condition()` holds (a state another party reaches: a statement queued behind a
 * lock, a line in a child's output), checking it at every turn of the event loop. Fails with
 * `what` after `ms` (only so that a condition never met is a clear failure, not Jest's timeout).
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  ms = 10_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting until ${what}`);
    await nextTurn();
  }
}

/** A promise resolved by hand: holds a transaction open, or marks a point another party reached. */
export function latch(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}
