import { allowedIpProblem, allowedNetwork, MIN_PREFIX, normalizeAllowedIps } from './allowed-ips';

describe('allowed IPs', () => {
  it('bounds networks at Microsoft 365’s widest outbound ranges', () => {
    expect(MIN_PREFIX).toEqual({ 4: 14, 6: 36 });
  });

  it.each([
    '10.0.0.1',
    '203.0.113.0/24',
    '40.92.0.0/15',
    '40.92.0.0/14',
    '10.0.0.0/32',
    '2001:db8::1',
    '2a01:111:f400::/48',
    '2a01:111:f000::/36',
    ' 203.0.113.7 ',
    // One client: an IPv4-mapped address is its IPv4 address, any other single address is itself.
    '::ffff:192.0.2.1',
    '::1',
    '64:ff9b::c000:201',
    '2002:c000:201::1',
    // IPv4-mapped networks narrow enough as IPv4 networks.
    '::ffff:192.0.2.0/120',
    '::ffff:40.92.0.0/110',
  ])('accepts %s', (entry) => {
    expect(allowedIpProblem(entry)).toBeNull();
  });

  it.each([
    ['not-an-ip', /not an IPv4/],
    ['256.1.1.1', /not an IPv4/],
    ['10.0.0.0/33', /invalid prefix/],
    ['10.0.0.0/', /invalid prefix/],
    ['10.0.0.0/-1', /invalid prefix/],
    ['10.0.0.0/+8', /invalid prefix/],
    ['10.0.0.0/24/8', /invalid prefix/],
    ['2001:db8::/129', /invalid prefix/],
    ['10.0.0.0/0', /too wide: the prefix must be at least \/14 for IPv4$/],
    ['10.0.0.0/8', /too wide/],
    ['172.16.0.0/12', /too wide/],
    ['40.92.0.0/13', /too wide/],
    ['2001:db8::/8', /too wide: the prefix must be at least \/36 for IPv6$/],
    ['2001:db8::/16', /too wide/],
    ['2001:db8::/32', /too wide/],
    ['2001:db8::/35', /too wide/],
    // IPv4-mapped ranges are IPv4 ranges: /96 is all of IPv4, /104 a /8.
    ['::ffff:0:0/96', /too wide: the prefix must be at least \/14 for IPv4, \/110 as IPv4-mapped IPv6/],
    ['::ffff:10.0.0.0/104', /too wide/],
    ['::ffff:0:0/95', /special-purpose IPv6 addresses \(IPv4-mapped, ::ffff:0:0\/96\)/],
    ['::/64', /IPv4-mapped/],
    ['::/36', /IPv4-mapped/],
    ['::1/127', /special-purpose IPv6 addresses \(unspecified, loopback, IPv4-compatible, ::\/8\)/],
    ['::c000:200/120', /special-purpose/],
    ['64:ff9b::/96', /NAT64, 64:ff9b::\/96/],
    ['64:ff9b::c000:200/120', /NAT64/],
    ['64:ff9b:1::/48', /NAT64, 64:ff9b:1::\/48/],
    ['64:ff9b:1:ab::/64', /NAT64/],
    ['2001::/32', /too wide/],
    ['2001::/36', /Teredo, 2001::\/32/],
    ['2001:0:4136:e378::/64', /Teredo/],
    ['2002::/36', /6to4/],
    ['2002:c000:200::/40', /6to4/],
  ])('refuses %s', (entry, reason) => {
    expect(allowedIpProblem(entry)).toMatch(reason);
  });

  it('names the entry as it was written', () => {
    expect(allowedIpProblem('10.0.0.0/8')).toMatch(/^10\.0\.0\.0\/8 is too wide/);
  });

  it('reads the network that is stored and matched', () => {
    expect(allowedNetwork('::ffff:192.0.2.7/120')).toEqual({ version: 4, text: '192.0.2.0/24', prefix: 24 });
  });

  it('stores the normalised form, deduplicated, in the order given', () => {
    expect(
      normalizeAllowedIps([
        '10.0.0.1',
        '2001:DB8::1',
        '10.0.0.1',
        '2001:db8:0:0::1',
        ' 192.0.2.7/24 ',
        '::ffff:192.0.2.0/120',
        '::FFFF:C000:0201',
        '192.0.2.1',
        '2001:DB8:77:0:0:0:0:1/48',
      ]),
    ).toEqual(['10.0.0.1', '2001:db8::1', '192.0.2.0/24', '192.0.2.1', '2001:db8:77::/48']);
  });
});
