import {
  MAX_ATTEMPTS,
  MAX_RETRY_AFTER_MS,
  RETRY_DELAYS_MS,
  nextAttemptDelayMs,
  parseRetryAfter,
} from './retry-schedule';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const middle = () => 0.5;
const lowest = () => 0;
const highest = () => 0.999999;

describe('retry schedule', () => {
  it('waits 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 20 h: 10 attempts over about 3 days', () => {
    expect(RETRY_DELAYS_MS).toEqual([
      5 * SECOND,
      5 * MINUTE,
      30 * MINUTE,
      2 * HOUR,
      5 * HOUR,
      10 * HOUR,
      14 * HOUR,
      20 * HOUR,
      20 * HOUR,
    ]);
    expect(MAX_ATTEMPTS).toBe(10);
    const total = RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0);
    expect(total / HOUR).toBeCloseTo(71.6, 1);
  });

  it('gives the delay of each attempt unjittered when random() is 0.5', () => {
    const delays = Array.from({ length: 9 }, (_, index) => nextAttemptDelayMs(index + 1, undefined, middle));
    expect(delays).toEqual(RETRY_DELAYS_MS);
  });

  it('jitters each delay by at most 10 %', () => {
    for (let attempts = 1; attempts < MAX_ATTEMPTS; attempts++) {
      const delay = RETRY_DELAYS_MS[attempts - 1];
      expect(nextAttemptDelayMs(attempts, undefined, lowest)).toBe(Math.round(delay * 0.9));
      expect(nextAttemptDelayMs(attempts, undefined, highest)).toBe(
        Math.round(delay * (0.9 + 0.2 * 0.999999)),
      );
      for (let sample = 0; sample < 50; sample++) {
        const jittered = nextAttemptDelayMs(attempts, undefined)!;
        expect(jittered).toBeGreaterThanOrEqual(delay * 0.9);
        expect(jittered).toBeLessThanOrEqual(delay * 1.1);
      }
    }
  });

  it('gives up after the 10th attempt', () => {
    expect(nextAttemptDelayMs(9, undefined, middle)).toBe(20 * HOUR);
    expect(nextAttemptDelayMs(10, undefined, middle)).toBeNull();
    expect(nextAttemptDelayMs(11, 5 * SECOND, middle)).toBeNull();
  });

  it('refuses an attempt count that is not a positive integer', () => {
    expect(() => nextAttemptDelayMs(0, undefined)).toThrow(RangeError);
    expect(() => nextAttemptDelayMs(1.5, undefined)).toThrow(RangeError);
  });

  it('waits at least what Retry-After asks, at most 1 hour of it, and never less than the schedule', () => {
    expect(nextAttemptDelayMs(1, 120 * SECOND, middle)).toBe(120 * SECOND);
    expect(nextAttemptDelayMs(1, 2 * SECOND, middle)).toBe(5 * SECOND);
    expect(nextAttemptDelayMs(2, 10 * HOUR, middle)).toBe(HOUR);
    expect(nextAttemptDelayMs(4, 10 * HOUR, middle)).toBe(2 * HOUR);
  });
});

describe('parseRetryAfter', () => {
  const now = new Date('2026-03-01T12:00:00.000Z');

  it.each([
    ['120', 120 * SECOND],
    [' 30 ', 30 * SECOND],
    ['0', 0],
    ['3600', HOUR],
    ['86400', MAX_RETRY_AFTER_MS],
    ['9'.repeat(400), MAX_RETRY_AFTER_MS] as [string, number],
    ['Sun, 01 Mar 2026 12:02:00 GMT', 2 * MINUTE],
    ['Sun, 01 Mar 2026 12:00:00 GMT', 0],
    ['Mon, 02 Mar 2026 12:00:00 GMT', MAX_RETRY_AFTER_MS],
  ])('reads %j as %d ms', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });

  it.each([
    undefined,
    '',
    '-5',
    '1.5',
    '1e3',
    'soon',
    'Sun, 01 Mar 2026 11:59:00 GMT',
    'Sun, 32 Mar 2026 12:00:00 GMT',
  ])('ignores %j', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});
