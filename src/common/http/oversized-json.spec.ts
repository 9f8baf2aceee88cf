import { BadRequestException } from '@nestjs/common';
import { checkFieldCounts, MAX_FIELDS_PER_OBJECT, OversizedJsonObject } from './oversized-json';

const fields = (n: number, prefix = 'k') =>
  Array.from({ length: n }, (_, i) => `"${prefix}${i}":${i}`).join(',');

describe('checkFieldCounts', () => {
  it('lets a body with objects up to the limit through to JSON.parse', () => {
    expect(checkFieldCounts(`{${fields(MAX_FIELDS_PER_OBJECT)}}`)).toBeUndefined();
    expect(
      checkFieldCounts(`[${Array.from({ length: 3000 }, () => `{${fields(3)}}`).join(',')}]`),
    ).toBeUndefined();
  });

  it('hands on the names of a top-level object over the limit, in order, escapes decoded', () => {
    const text = ` {"a\\"b":1,"c:}{":{"x":[1,{"y":2}]},${fields(MAX_FIELDS_PER_OBJECT)},"\\u00e9":"}"} `;
    const result = checkFieldCounts(text);
    expect(result).toBeInstanceOf(OversizedJsonObject);
    const names = result!.fieldNames;
    expect(names.slice(0, 3)).toEqual(['a"b', 'c:}{', 'k0']);
    expect(names).toHaveLength(MAX_FIELDS_PER_OBJECT + 3);
    expect(names[names.length - 1]).toBe('é');
  });

  it('does not count colons, braces or quotes inside strings', () => {
    const text = `{"s":"${'\\":'.repeat(4000)}{{}}"}`;
    expect(checkFieldCounts(text)).toBeUndefined();
  });

  it('ends a string at a quote after an even run of backslashes, not after an odd one', () => {
    // "a" and six backslashes (three escaped ones): the quote after them closes the string; after seven it does not.
    const evenRun = `{"s":"a${'\\\\'.repeat(3)}",${fields(MAX_FIELDS_PER_OBJECT)}}`;
    expect(checkFieldCounts(evenRun)?.fieldNames).toHaveLength(MAX_FIELDS_PER_OBJECT + 1);
    const oddRun = `{"s":"a${'\\\\'.repeat(3)}\\",${fields(MAX_FIELDS_PER_OBJECT)}"}`;
    expect(checkFieldCounts(oddRun)).toBeUndefined();
  });

  it('refuses a nested object over the limit, in an object or in an array', () => {
    const big = `{${fields(MAX_FIELDS_PER_OBJECT + 1)}}`;
    expect(() => checkFieldCounts(`{"a":${big}}`)).toThrow(BadRequestException);
    expect(() => checkFieldCounts(`[${big}]`)).toThrow(/1001 fields \(at most 1000\)/);
  });

  it('skips the scan for short texts', () => {
    expect(checkFieldCounts('{"a":1}')).toBeUndefined();
  });
});
