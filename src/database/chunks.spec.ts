import { chunks, packed, ROWS_PER_STATEMENT } from './chunks';

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

describe('packed', () => {
  it('packs groups in order into units of at most the size, never splitting a group', () => {
    expect(packed([[1, 2], [3], [4, 5, 6], [7]], 3)).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
    expect(packed([[1], [2, 3, 4, 5], [6]], 3)).toEqual([[1], [2, 3, 4, 5], [6]]);
    expect(packed([[1], [], [2]], 2)).toEqual([[1, 2]]);
  });

  it('measures items by their weight when given one', () => {
    const words = [['aa'], ['bb', 'c'], ['dddddd'], ['e'], ['fffffffff'], ['g']];
    expect(packed(words, 6, (w) => w.length)).toEqual([
      ['aa', 'bb', 'c'],
      ['dddddd'],
      ['e'],
      ['fffffffff'],
      ['g'],
    ]);
  });

  it('answers no unit for no groups, one for any number when the size is unbounded', () => {
    expect(packed([], 5)).toEqual([]);
    expect(packed([[1, 2], [3]], Number.POSITIVE_INFINITY)).toEqual([[1, 2, 3]]);
    expect(() => packed([[1]], 0)).toThrow(RangeError);
  });
});
