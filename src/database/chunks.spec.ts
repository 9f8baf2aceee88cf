import { chunks, ROWS_PER_STATEMENT } from './chunks';

describe('chunks', () => {
  it('cuts a list into consecutive slices, the last one shorter', () => {
    expect(chunks([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunks([1, 2, 3, 4], 2)).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });

  it('answers no slice for an empty list, and slices of ROWS_PER_STATEMENT by default', () => {
    expect(chunks([])).toEqual([]);
    const sizes = chunks(Array.from({ length: ROWS_PER_STATEMENT * 2 + 1 }, (_, n) => n)).map(
      (c) => c.length,
    );
    expect(sizes).toEqual([ROWS_PER_STATEMENT, ROWS_PER_STATEMENT, 1]);
  });

  it('refuses a size that would never end', () => {
    expect(() => chunks([1], 0)).toThrow(RangeError);
    expect(() => chunks([1], Number.NaN)).toThrow(RangeError);
  });
});
