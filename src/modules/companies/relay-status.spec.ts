import { deriveRelayStatus } from './relay-status';

describe('deriveRelayStatus', () => {
  const now = new Date('2026-11-22T08:00:00.000Z');
  const later = new Date('2026-12-22T08:00:00.000Z');
  const paid = { status: 'active' as const, packageUuid: 'p', periodEnd: later, quota: 100, used: 10 };

  it.each([
    [
      'suspended wins over everything',
      { ...paid, status: 'suspended' as const, packageUuid: null },
      'suspended',
    ],
    ['never paid', { ...paid, packageUuid: null, periodEnd: null }, 'no_package'],
    ['period ended exactly now', { ...paid, periodEnd: now }, 'expired'],
    ['expired wins over quota', { ...paid, periodEnd: now, used: 500 }, 'expired'],
    ['used reached quota', { ...paid, used: 100 }, 'quota_exceeded'],
    ['otherwise active', paid, 'active'],
  ])('%s', (_name, company, expected) => {
    expect(deriveRelayStatus(company, now)).toBe(expected);
  });
});
