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

  it('writes a column of text and nulls through JSON, its nulls as the literal reads NULL', () => {
    expect(pgArray(['a', null, 'say "hi"', undefined, 'NULL', 'é✓ {x,y}', ''])).toBe(
      '{"a",null,"say \\"hi\\"",null,"NULL","é✓ {x,y}",""}',
    );
    expect(pgArray([null, null])).toBe('{null,null}');
    // A value that is itself JSON (a record's events): its quotes escaped once more.
    expect(pgArray(['[{"response":"550 \\"no\\""}]'])).toBe(
      '{"[{\\"response\\":\\"550 \\\\\\"no\\\\\\"\\"}]"}',
    );
  });

  it('writes text that JSON would escape otherwise value by value, as it is', () => {
    // The literal keeps a newline, a tab or a lone surrogate between quotes as they are; JSON's
    // \n, \t or \ud800 would be read as n, t and ud800.
    expect(pgArray(['line\nbreak', 'tab\there', null])).toBe('{"line\nbreak","tab\there",NULL}');
    expect(pgArray(['\ud800'])).toBe('{"\ud800"}');
    // A backslash before a letter (JSON's \\n): each backslash escaped once.
    expect(pgArray(['a\\n', 'C:\\dir'])).toBe('{"a\\\\n","C:\\\\dir"}');
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
