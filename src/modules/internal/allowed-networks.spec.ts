import fc from 'fast-check';
import { BlockList } from 'node:net';
import { ipv4Value } from '../../common/net/ip-address';
import { AllowedNetworks } from './allowed-networks';

describe('AllowedNetworks', () => {
  it('builds the same table in slices, letting the event loop turn between them', async () => {
    const companies = Array.from({ length: 1_200 }, (_, i) => ({
      id: i,
      allowedIps: [`10.${(i >> 8) & 255}.${i & 255}.0/28`, `2001:db8:${i.toString(16)}::/48`],
    }));
    let turned = false;
    setImmediate(() => (turned = true));
    const built = await AllowedNetworks.build(companies);
    expect(turned).toBe(true);
    const atOnce = new AllowedNetworks(companies);
    for (const address of ['10.0.0.5', '10.4.175.14', '10.4.175.16', '2001:db8:4af::1', '2001:db8:4b0::1']) {
      expect(built.companiesHolding(address)).toEqual(atOnce.companiesHolding(address));
    }
    expect(built.companiesHolding('10.4.175.14')).toEqual([1199]);
  });

  const networks = new AllowedNetworks([
    { id: 1, allowedIps: ['203.0.113.7'] },
    { id: 2, allowedIps: ['198.51.100.0/24', '2001:db8:77::/48'] },
    { id: 3, allowedIps: ['40.92.0.0/15', '2a01:111:f400::/48', '198.51.100.128/25'] },
    { id: 4, allowedIps: ['40.92.0.0/15', '10.1.0.0/16', '10.1.2.0/24'] },
    { id: 5, allowedIps: ['2001:db8::1', '::ffff:192.0.2.0/120'] },
  ]);

  it.each([
    ['203.0.113.7', [1]],
    ['203.0.113.8', []],
    ['198.51.100.1', [2]],
    ['198.51.100.200', [2, 3]],
    ['::ffff:198.51.100.1', [2]],
    ['::FFFF:198.51.100.1', [2]],
    ['::ffff:c633:6401', [2]],
    ['0:0:0:0:0:ffff:c633:6401', [2]],
    ['IPv6:::ffff:198.51.100.1', [2]],
    ['40.93.255.255', [3, 4]],
    ['40.94.0.0', []],
    ['10.1.2.3', [4]],
    ['192.0.2.1', [5]],
    ['::ffff:c000:201', [5]],
    ['2001:db8:77::25', [2]],
    ['IPv6:2001:db8:77::25', [2]],
    ['2001:db8:77:ffff:ffff:ffff:ffff:ffff', [2]],
    ['2001:db8:78::', []],
    ['2a01:111:f400:7e1c::5', [3]],
    ['2001:db8::1', [5]],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', [5]],
    ['2001:DB8::1%eth0', [5]],
    ['2001:db8::2', []],
    // IPv4-compatible is not IPv4-mapped: another address.
    ['::c000:201', []],
    ['not an address', []],
    ['', []],
  ])('%s is held by %j', (address, ids) => {
    expect(networks.companiesHolding(address).sort()).toEqual(ids);
  });

  it('lists a company once when several of its networks hold the address', () => {
    expect(
      new AllowedNetworks([
        { id: 9, allowedIps: ['10.0.0.0/14', '10.0.0.0/16', '10.0.0.1'] },
      ]).companiesHolding('10.0.0.1'),
    ).toEqual([9]);
  });

  it('matches values stored before they were normalised', () => {
    const legacy = new AllowedNetworks([
      { id: 1, allowedIps: ['192.0.2.7/24', '2001:DB8:0077::/48'] },
      { id: 2, allowedIps: ['::FFFF:C633:6400/120', ' 203.0.113.9 '] },
    ]);
    expect(legacy.companiesHolding('192.0.2.200')).toEqual([1]);
    expect(legacy.companiesHolding('2001:db8:77::1')).toEqual([1]);
    expect(legacy.companiesHolding('198.51.100.9')).toEqual([2]);
    expect(legacy.companiesHolding('203.0.113.9')).toEqual([2]);
  });

  it('ignores entries the rules refuse: not an address, too wide, a range of special-purpose IPv6', () => {
    const stored = new AllowedNetworks([
      {
        id: 1,
        allowedIps: [
          'mail.example.com',
          '10.0.0.0/8',
          '::ffff:0:0/96',
          '::/64',
          '64:ff9b::/96',
          '2002::/24',
          '2001:db8::/16',
        ],
      },
    ]);
    for (const address of [
      '10.1.2.3',
      '192.0.2.1',
      '::ffff:192.0.2.1',
      '64:ff9b::c000:201',
      '2002:c000:201::1',
      '2001:db8::1',
    ])
      expect([address, stored.companiesHolding(address)]).toEqual([address, []]);
  });

  it('matches an IPv4 client however its address is written', () => {
    const index = new AllowedNetworks([
      { id: 1, allowedIps: ['203.0.113.0/24', '::ffff:198.51.100.0/120'] },
      { id: 2, allowedIps: ['203.0.113.128/25', '198.51.100.7'] },
    ]);
    const ipv4 = fc.oneof(
      fc.tuple(fc.constantFrom(203, 198), fc.constantFrom(0, 51), fc.constantFrom(113, 100), fc.nat(255)),
      fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)),
    );
    fc.assert(
      fc.property(ipv4, fc.nat(4), (parts, form) => {
        const v4 = parts.join('.');
        const value = ipv4Value(v4);
        const [high, low] = [(value >>> 16).toString(16), (value & 0xffff).toString(16)];
        const written = [
          `::ffff:${v4}`,
          `::FFFF:${high.toUpperCase()}:${low}`,
          `0:0:0:0:0:ffff:${high.padStart(4, '0')}:${low.padStart(4, '0')}`,
          `IPv6:::ffff:${v4}`,
          `::ffff:${high}:${low}%eth0`,
        ][form];
        expect(index.companiesHolding(written).sort()).toEqual(index.companiesHolding(v4).sort());
      }),
    );
  });

  it('agrees with node:net BlockList on random addresses and networks', () => {
    let seed = 7;
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const v4 = () => [random(4) + 10, random(4), random(4), random(256)].join('.');
    const v6 = () =>
      `2001:db8:${random(4).toString(16)}::${random(3).toString(16)}:${random(65536).toString(16)}`;
    const companies = Array.from({ length: 200 }, (_, id) => ({
      id,
      allowedIps: [`${v4()}/${14 + random(19)}`, v4(), `${v6()}/${36 + random(93)}`, v6()],
    }));
    const index = new AllowedNetworks(companies);
    const lists = companies.map(({ id, allowedIps }) => {
      const list = new BlockList();
      for (const entry of allowedIps) {
        const [address, prefix] = entry.split('/');
        const type = address.includes(':') ? 'ipv6' : 'ipv4';
        if (prefix === undefined) list.addAddress(address, type);
        else list.addSubnet(address, Number(prefix), type);
      }
      return { id, list };
    });
    for (let i = 0; i < 2_000; i++) {
      const address = i % 2 ? v4() : v6();
      const type = i % 2 ? 'ipv4' : 'ipv6';
      const expected = lists.filter(({ list }) => list.check(address, type)).map(({ id }) => id);
      expect([address, index.companiesHolding(address).sort((a, b) => a - b)]).toEqual([address, expected]);
    }
  });
});
