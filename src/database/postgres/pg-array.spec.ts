import { pgArray } from './pg-array';

describe('pgArray', () => {
  it('writes text quoted, with " and \\ escaped, numbers and booleans bare, null as NULL', () => {
    expect(
      pgArray(['a', 'say "hi"', 'C:\\dir', '', 'NULL', null, undefined, 7, -1.5, 10n, true, false]),
    ).toBe('{"a","say \\"hi\\"","C:\\\\dir","","NULL",NULL,NULL,7,-1.5,10,t,f}');
  });

  it('writes a column of plain text, and a single or empty text, the same way', () => {
    expect(pgArray(['a', 'b c', ''])).toBe('{"a","b c",""}');
    expect(pgArray([''])).toBe('{""}');
    expect(pgArray(['a', 'b"'])).toBe('{"a","b\\""}');
    expect(pgArray([])).toBe('{}');
  });

  it('writes dates in UTC as toISOString does', () => {
    expect(pgArray([new Date('2026-11-28T13:05:09.042Z'), new Date(0)])).toBe(
      '{2026-11-28T13:05:09.042Z,1970-01-01T00:00:00.000Z}',
    );
  });

  it('leaves an array holding anything else (bytes, an invalid date) to pg as it is', () => {
    const bytes = [Buffer.from('x'), 'a'];
    expect(pgArray(bytes)).toBe(bytes);
    const invalid = [new Date(Number.NaN)];
    expect(pgArray(invalid)).toBe(invalid);
  });
});
