import { isoString } from './iso-string';

describe('isoString', () => {
  it.each([
    0,
    1,
    999,
    86_399_999,
    951_782_400_000, // 2000-02-29
    1_709_164_800_000, // 2024-02-29
    1_735_689_599_999, // 2024-12-31T23:59:59.999Z
    4_107_542_400_000, // 2100-03-01
    253_402_300_799_999, // 9999-12-31T23:59:59.999Z
  ])('writes %d as toISOString does', (ms) => {
    expect(isoString(new Date(ms))).toBe(new Date(ms).toISOString());
  });

  it('agrees with toISOString on 200,000 random instants of 1970–9999', () => {
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const wrong: number[] = [];
    for (let i = 0; i < 200_000; i++) {
      const ms = Math.floor(random() * 253_402_300_800_000);
      if (isoString(new Date(ms)) !== new Date(ms).toISOString()) wrong.push(ms);
    }
    expect(wrong).toEqual([]);
  });

  it('leaves years outside 1970–9999 to toISOString, and throws for an invalid date as it does', () => {
    expect(isoString(new Date(-1))).toBe('1969-12-31T23:59:59.999Z');
    expect(isoString(new Date(Date.UTC(10_000, 0, 1)))).toBe('+010000-01-01T00:00:00.000Z');
    expect(() => isoString(new Date(Number.NaN))).toThrow(RangeError);
  });
});
