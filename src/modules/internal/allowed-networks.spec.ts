import { BlockList } from 'node:net';
import { AllowedNetworks, ipv4Value, ipv6Hex } from './allowed-networks';

describe('AllowedNetworks', () => {
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
    ['40.93.255.255', [3, 4]],
    ['40.94.0.0', []],
    ['10.1.2.3', [4]],
    ['2001:db8:77::25', [2]],
    ['2001:db8:77:ffff:ffff:ffff:ffff:ffff', [2]],
    ['2001:db8:78::', []],
    ['2a01:111:f400:7e1c::5', [3]],
    ['2001:db8::1', [5]],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', [5]],
    ['2001:db8::2', []],
    ['not an address', []],
    ['', []],
  ])('%s is held by %j', (address, ids) => {
    expect(networks.companiesHolding(address).sort()).toEqual(ids);
  });

  it('lists a company once when several of its networks hold the address', () => {
    expect(
      new AllowedNetworks([
        { id: 9, allowedIps: ['10.0.0.0/8', '10.0.0.0/16', '10.0.0.1'] },
      ]).companiesHolding('10.0.0.1'),
    ).toEqual([9]);
  });

  it('agrees with node:net BlockList on random addresses and networks', () => {
    let seed = 7;
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const v4 = () => [random(4) + 10, random(4), random(4), random(256)].join('.');
    const v6 = () =>
      `2001:db8:${random(4).toString(16)}::${random(3).toString(16)}:${random(65536).toString(16)}`;
    const companies = Array.from({ length: 200 }, (_, id) => ({
      id,
      allowedIps: [`${v4()}/${8 + random(25)}`, v4(), `${v6()}/${16 + random(113)}`, v6()],
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
    expect(ipv6Hex('1:2:3:4:5:6:7:8')).toBe('00010002000300040005000600070008');
  });
});
