import { allowedIpProblem, normalizeAllowedIps } from './allowed-ips';

describe('allowed IPs', () => {
  it.each(['10.0.0.1', '203.0.113.0/24', '40.92.0.0/15', '2001:db8::1', '2a01:111:f400::/48', '10.0.0.0/32'])(
    'accepts %s',
    (entry) => {
      expect(allowedIpProblem(entry)).toBeNull();
    },
  );

  it.each([
    ['not-an-ip', /not an IPv4/],
    ['256.1.1.1', /not an IPv4/],
    ['10.0.0.0/33', /invalid prefix/],
    ['10.0.0.0/', /invalid prefix/],
    ['10.0.0.0/-1', /invalid prefix/],
    ['10.0.0.0/+8', /invalid prefix/],
    ['10.0.0.0/0', /too wide/],
    ['2001:db8::/129', /invalid prefix/],
    ['2001:db8::/8', /too wide/],
    ['10.0.0.0/24/8', /invalid prefix/],
  ])('refuses %s', (entry, reason) => {
    expect(allowedIpProblem(entry)).toMatch(reason);
  });

  it('deduplicates case-insensitively and keeps the order', () => {
    expect(normalizeAllowedIps(['10.0.0.1', '2001:DB8::1', '10.0.0.1', '2001:db8::1'])).toEqual([
      '10.0.0.1',
      '2001:db8::1',
    ]);
  });
});
