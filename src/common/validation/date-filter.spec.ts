import { validateSync } from 'class-validator';
import { BadRequestError } from '../errors/domain-error';
import { DAY_MS, IsDateFilter, toDateWindow, utcDayOf } from './date-filter';

class Filter {
  @IsDateFilter()
  from?: unknown;
}

const problems = (from: unknown) =>
  validateSync(Object.assign(new Filter(), { from })).flatMap((e) => Object.values(e.constraints ?? {}));

describe('date filters (README "Identifiers, names, time, money")', () => {
  it.each([
    ['2026-01-31', '2026-01-31'],
    ['2024-02-29', '2024-02-29'],
    ['2026-01-31T10:00Z', '2026-01-31'],
    ['2026-01-31T10:00:59Z', '2026-01-31'],
    ['2026-01-31T10:00:59.123Z', '2026-01-31'],
    ['2026-01-31T10:00:59.123456789Z', '2026-01-31'],
    ['2026-01-31T23:30:00-02:00', '2026-02-01'],
    ['2026-02-01T01:00:00+07:00', '2026-01-31'],
  ])('accepts %s, the UTC day %s', (value, day) => {
    expect(problems(value)).toEqual([]);
    expect(utcDayOf(value)).toBe(day);
  });

  it.each([
    'yesterday',
    '01/02/2026',
    '2026-1-01',
    '2026-13-01',
    '2026-02-30',
    '2025-02-29',
    '2026-02-30T00:00:00Z',
    '2026-04-31T10:00Z',
    '2026-01-01T24:00Z',
    '2026-01-01T23:60Z',
    '2026-01-01T23:59:60Z',
    '2026-01-01T10:00:00+24:00',
    '2026-01-01T10:00:00',
    '2026-01-01T10Z',
    '2026-01-01T10:00:00.1234567890Z',
    '2026-01-01 10:00:00Z',
    ' 2026-01-01',
    '',
  ])('refuses %j with one message', (value) => {
    expect(problems(value)).toEqual(['from must be a date (YYYY-MM-DD) or an ISO 8601 timestamp']);
    expect(utcDayOf(value)).toBeNull();
  });

  it.each([[20260101], [['2026-01-01']], [{}], [null]])('refuses a non-string %j', (value) => {
    expect(problems(value)).toHaveLength(1);
    expect(utcDayOf(value)).toBeNull();
  });

  describe('toDateWindow', () => {
    it('covers a date-only `to` whole (inclusive, UTC)', () => {
      expect(toDateWindow('2026-01-01', '2026-01-31')).toEqual({
        from: new Date('2026-01-01T00:00:00.000Z'),
        toExclusive: new Date(Date.parse('2026-01-31T00:00:00.000Z') + DAY_MS),
      });
    });

    it('takes a timestamp `to` up to and including its millisecond', () => {
      expect(toDateWindow(undefined, '2026-01-31T10:00:00+07:00')).toEqual({
        toExclusive: new Date(Date.parse('2026-01-31T03:00:00.000Z') + 1),
      });
      expect(toDateWindow('2026-01-31T03:00:00Z', '2026-01-31T10:00:00+07:00').from).toEqual(
        new Date('2026-01-31T03:00:00Z'),
      );
    });

    it('allows one day (from = to) and refuses from after to', () => {
      expect(toDateWindow('2026-01-31', '2026-01-31').toExclusive).toEqual(new Date('2026-02-01T00:00:00Z'));
      expect(() => toDateWindow('2026-02-01', '2026-01-31')).toThrow(BadRequestError);
      expect(() => toDateWindow('2026-02-01', '2026-01-31')).toThrow('from must not be after to');
    });

    it('is empty without values', () => {
      expect(toDateWindow()).toEqual({});
    });
  });
});
