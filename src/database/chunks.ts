/**
 * Keys or rows in one statement where a list of unknown length goes into it (`IN (…)` lists,
 * multi-row reads and writes): far below SQLite's 32,766 bound parameters and PostgreSQL's
 * 65,535, and a size at which a statement costs less to run than to build.
 */
export const ROWS_PER_STATEMENT = 500;

/** `items` in consecutive slices of `size` (the last one shorter); none for an empty list. */
export function chunks<T>(items: readonly T[], size: number = ROWS_PER_STATEMENT): T[][] {
  if (!(size >= 1)) throw new RangeError(`chunks: size ${size}`);
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * `groups` packed in order into units of at most `size` items, a group never split (one larger
 * than `size` is a unit alone); each unit flattened. None for no groups. `weightOf` measures an
 * item when items are not all alike (a message's characters): 1 each by default.
 */
export function packed<T>(
  groups: ReadonlyArray<readonly T[]>,
  size: number,
  weightOf: (item: T) => number = () => 1,
): T[][] {
  if (!(size >= 1)) throw new RangeError(`packed: size ${size}`);
  const out: T[][] = [];
  let unit: T[] = [];
  let unitWeight = 0;
  for (const group of groups) {
    const weight = group.reduce((sum, item) => sum + weightOf(item), 0);
    if (unit.length > 0 && unitWeight + weight > size) {
      out.push(unit);
      unit = [];
      unitWeight = 0;
    }
    unit.push(...group);
    unitWeight += weight;
  }
  if (unit.length > 0) out.push(unit);
  return out;
}
