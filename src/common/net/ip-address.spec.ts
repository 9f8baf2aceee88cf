import fc from 'fast-check';
import { BlockList } from 'node:net';
import { ipv4Value, ipv6Hex, networksOverlap, normaliseIp, parseNetwork } from './ip-address';

/** Every way of writing an IPv4 address as IPv4-mapped IPv6. */
function mappedForms(v4: string): string[] {
  const value = ipv4Value(v4);
  const high = (value >>> 16).toString(16);
  const low = (value & 0xffff).toString(16);
  return [
    `::ffff:${v4}`,
    `::FFFF:${v4}`,
    `::ffff:${high}:${low}`,
    `::FFFF:${high.toUpperCase()}:${low.toUpperCase()}`,
    `0:0:0:0:0:ffff:${high.padStart(4, '0')}:${low.padStart(4, '0')}`,
    `0000:0000:0000:0000:0000:FFFF:${v4}`,
    `0::ffff:${high}:${low}`,
    `IPv6:::ffff:${v4}`,
    `::ffff:${v4}%eth0`,
  ];
}

const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((parts) => parts.join('.'));

describe('normaliseIp', () => {
  it.each([
    ['192.0.2.1', '192.0.2.1'],
    ['0.0.0.0', '0.0.0.0'],
    ['::ffff:192.0.2.1', '192.0.2.1'],
    ['::ffff:c000:201', '192.0.2.1'],
    ['0:0:0:0:0:ffff:c000:0201', '192.0.2.1'],
    ['::FFFF:C000:0201', '192.0.2.1'],
    ['IPv6:::ffff:192.0.2.1', '192.0.2.1'],
    ['2001:db8::1', '2001:db8::1'],
    ['2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['IPv6:2001:db8::1', '2001:db8::1'],
    ['ipv6:2001:DB8::1', '2001:db8::1'],
    ['fe80::1%eth0', 'fe80::1'],
    // Any zone id node:net takes, not only letters and digits.
    ['fe80::1%eth-0.1', 'fe80::1'],
    ['::ffff:192.0.2.1%en0', '192.0.2.1'],
    ['::', '::'],
    ['::1', '::1'],
    ['1::', '1::'],
    // RFC 5952: one zero group is not compressed; of equal runs the first; the longest run wins.
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
    ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
    // IPv4-compatible (not mapped) stays IPv6.
    ['::192.0.2.1', '::c000:201'],
    ['::ffff:0:192.0.2.1', '::ffff:0:c000:201'],
    ['64:ff9b::192.0.2.1', '64:ff9b::c000:201'],
  ])('%s → %s', (text, normal) => {
    expect(normaliseIp(text)).toBe(normal);
  });

  it.each([
    '',
    'not an address',
    '256.1.1.1',
    '010.0.0.1',
    ' 1.2.3.4',
    '1.2.3.4/32',
    '2001:db8::1::2',
    'IPv6:',
    'fe80::1%',
    '[::1]',
    // inet_aton's forms: not addresses here.
    '127.1',
    '0x7f.0.0.1',
    '3221225985',
    '1.2.3.04',
    '::ffff:0x7f.0.0.1',
    '::ffff:127.1',
    '::ffff:1.2.3.256',
    '2001:db8::12345',
    'IPv6:192.0.2.1x',
  ])('refuses %j', (text) => {
    expect(normaliseIp(text)).toBeNull();
  });

  it('writes any IPv4 address given in any IPv4-mapped form as the IPv4 address', () => {
    fc.assert(
      fc.property(ipv4, (v4) => {
        for (const form of mappedForms(v4)) expect([form, normaliseIp(form)]).toEqual([form, v4]);
      }),
    );
  });

  it('gives the canonical text back unchanged, and text that node:net reads as the same address', () => {
    fc.assert(
      fc.property(fc.ipV6(), (address) => {
        const normal = normaliseIp(address)!;
        expect(normaliseIp(normal)).toBe(normal);
        expect(normal).toBe(normal.toLowerCase());
        expect(normal).not.toMatch(/(^|:)0[0-9a-f]/);
        const list = new BlockList();
        list.addAddress(address, 'ipv6');
        // BlockList matches an IPv4-mapped address with its IPv4 form.
        expect(list.check(normal, normal.includes(':') ? 'ipv6' : 'ipv4')).toBe(true);
      }),
    );
  });
});

describe('parseNetwork', () => {
  it.each([
    ['192.0.2.7', { version: 4, text: '192.0.2.7', prefix: 32 }],
    ['192.0.2.7/24', { version: 4, text: '192.0.2.0/24', prefix: 24 }],
    ['192.0.2.7/32', { version: 4, text: '192.0.2.7/32', prefix: 32 }],
    ['10.255.255.255/0', { version: 4, text: '0.0.0.0/0', prefix: 0 }],
    ['::ffff:192.0.2.0/120', { version: 4, text: '192.0.2.0/24', prefix: 24 }],
    ['::FFFF:C000:2FF/120', { version: 4, text: '192.0.2.0/24', prefix: 24 }],
    ['::ffff:192.0.2.1', { version: 4, text: '192.0.2.1', prefix: 32 }],
    ['::ffff:192.0.2.1/128', { version: 4, text: '192.0.2.1/32', prefix: 32 }],
    ['::ffff:0:0/96', { version: 4, text: '0.0.0.0/0', prefix: 0 }],
    ['::ffff:0:0/95', { version: 6, text: '::fffe:0:0/95', prefix: 95 }],
    ['2001:DB8:77:1::5/48', { version: 6, text: '2001:db8:77::/48', prefix: 48 }],
    ['2001:db8::1', { version: 6, text: '2001:db8::1', prefix: 128 }],
    ['2001:db8::8/125', { version: 6, text: '2001:db8::8/125', prefix: 125 }],
    ['2001:db8::f/125', { version: 6, text: '2001:db8::8/125', prefix: 125 }],
    // The edges of the prefix lengths.
    ['0.0.0.0/0', { version: 4, text: '0.0.0.0/0', prefix: 0 }],
    ['255.255.255.255/32', { version: 4, text: '255.255.255.255/32', prefix: 32 }],
    ['203.0.113.9/31', { version: 4, text: '203.0.113.8/31', prefix: 31 }],
    ['2001:db8::1/0', { version: 6, text: '::/0', prefix: 0 }],
    ['2001:db8::1/128', { version: 6, text: '2001:db8::1/128', prefix: 128 }],
    [
      'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/127',
      { version: 6, text: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe/127', prefix: 127 },
    ],
    ['IPv6:2001:db8::1/64', { version: 6, text: '2001:db8::/64', prefix: 64 }],
    ['fe80::1%eth0/64', { version: 6, text: 'fe80::/64', prefix: 64 }],
    // IPv4-mapped up to /96 becomes IPv4; IPv4-compatible (::/96) stays IPv6.
    ['::ffff:192.0.2.1/96', { version: 4, text: '0.0.0.0/0', prefix: 0 }],
    ['::ffff:203.0.113.9/127', { version: 4, text: '203.0.113.8/31', prefix: 31 }],
    ['::192.0.2.1/128', { version: 6, text: '::c000:201/128', prefix: 128 }],
    ['::192.0.2.0/120', { version: 6, text: '::c000:200/120', prefix: 120 }],
  ])('%s → %j', (entry, network) => {
    expect(parseNetwork(entry)).toEqual(network);
  });

  it.each([
    ['not-an-ip', /not an IPv4/],
    ['256.1.1.1', /not an IPv4/],
    ['/24', /not an IPv4/],
    ['10.0.0.0/33', /invalid prefix length \(0\.\.32\)/],
    ['10.0.0.0/', /invalid prefix/],
    ['10.0.0.0/-1', /invalid prefix/],
    ['10.0.0.0/+8', /invalid prefix/],
    ['10.0.0.0/abc', /invalid prefix/],
    ['10.0.0.0/24/8', /invalid prefix/],
    ['2001:db8::/129', /invalid prefix length \(0\.\.128\)/],
    ['::ffff:192.0.2.0/129', /invalid prefix length \(0\.\.128\)/],
    ['10.0.0.0/0032', /invalid prefix/],
    ['10.0.0.0/ 8', /invalid prefix/],
    ['127.1/8', /not an IPv4/],
    ['0x7f.0.0.1/8', /not an IPv4/],
  ])('refuses %s', (entry, problem) => {
    expect(parseNetwork(entry)).toMatch(problem);
  });

  it('clears the host bits as node:net BlockList matches them', () => {
    fc.assert(
      fc.property(ipv4, fc.nat(32), ipv4, (address, prefix, probe) => {
        const network = parseNetwork(`${address}/${prefix}`);
        if (typeof network === 'string') throw new Error(network);
        const list = new BlockList();
        list.addSubnet(address, prefix, 'ipv4');
        const [base] = network.text.split('/');
        expect(list.check(base, 'ipv4')).toBe(true);
        expect(networksOverlap(network, parseNetwork(probe) as typeof network)).toBe(
          list.check(probe, 'ipv4'),
        );
      }),
    );
  });
});

describe('networksOverlap', () => {
  const net = (entry: string) => parseNetwork(entry) as Exclude<ReturnType<typeof parseNetwork>, string>;

  it('holds when one network holds the other, never across versions', () => {
    expect(networksOverlap(net('2001:db8::/32'), net('2001:db8:1::/48'))).toBe(true);
    expect(networksOverlap(net('2001:db8:1::/48'), net('2001:db8::/32'))).toBe(true);
    expect(networksOverlap(net('2001:db8::/32'), net('2001:db9::/32'))).toBe(false);
    expect(networksOverlap(net('192.0.2.0/24'), net('::ffff:c000:200/120'))).toBe(true);
    expect(networksOverlap(net('192.0.2.0/24'), net('::c000:200/120'))).toBe(false);
  });

  it('at the edges of the prefix lengths', () => {
    expect(networksOverlap(net('0.0.0.0/0'), net('203.0.113.9'))).toBe(true);
    expect(networksOverlap(net('::/0'), net('2001:db8::1'))).toBe(true);
    expect(networksOverlap(net('::/0'), net('203.0.113.9'))).toBe(false);
    expect(networksOverlap(net('203.0.113.9/32'), net('203.0.113.9'))).toBe(true);
    expect(networksOverlap(net('203.0.113.9/32'), net('203.0.113.8'))).toBe(false);
    expect(networksOverlap(net('2001:db8::1/128'), net('2001:db8::1'))).toBe(true);
    expect(networksOverlap(net('2001:db8::1/128'), net('2001:db8::'))).toBe(false);
    expect(networksOverlap(net('2001:db8::/127'), net('2001:db8::1'))).toBe(true);
  });

  it('reads a network written by hand as IPv6 in the IPv4-mapped block as IPv6', () => {
    const mappedBlock = { version: 6, text: '::ffff:0:0/96', prefix: 96 } as const;
    expect(networksOverlap(mappedBlock, net('::ffff:0:c000:0/112'))).toBe(false);
    expect(networksOverlap(mappedBlock, { version: 6, text: '::ffff:c000:201', prefix: 128 })).toBe(true);
    expect(networksOverlap(mappedBlock, net('192.0.2.1'))).toBe(false);
  });
});

describe('address values', () => {
  it('reads IPv4 as an unsigned 32-bit number', () => {
    expect(ipv4Value('0.0.0.0')).toBe(0);
    expect(ipv4Value('255.255.255.255')).toBe(0xffffffff);
    expect(ipv4Value('192.0.2.1')).toBe(0xc0000201);
  });

  it('writes IPv6 as 32 hex digits, with ::, a dotted tail and a zone', () => {
    expect(ipv6Hex('::')).toBe('0'.repeat(32));
    expect(ipv6Hex('::1')).toBe('0'.repeat(31) + '1');
    expect(ipv6Hex('2001:DB8::1')).toBe('20010db8000000000000000000000001');
    expect(ipv6Hex('1::')).toBe('00010000000000000000000000000000');
    expect(ipv6Hex('::ffff:192.0.2.1')).toBe('00000000000000000000ffffc0000201');
    expect(ipv6Hex('fe80::1%eth0')).toBe('fe800000000000000000000000000001');
    expect(ipv6Hex('fe80::1%eth-0.1')).toBe('fe800000000000000000000000000001');
    expect(ipv6Hex('::192.0.2.1')).toBe('000000000000000000000000c0000201');
    expect(ipv6Hex('1:2:3:4:5:6:7:8')).toBe('00010002000300040005000600070008');
  });
});
