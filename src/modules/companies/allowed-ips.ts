import { IpNetwork, networksOverlap, parseNetwork } from '../../common/net/ip-address';

export const MAX_ALLOWED_IPS = 50;

/**
 * The narrowest prefix accepted for a network that may relay without SMTP authentication.
 * Wider ranges would turn the relay into an open relay for a large part of the Internet; the
 * mailbox suites publish /14 or narrower for IPv4 and /36 or narrower for IPv6.
 */
export const MIN_PREFIX = { 4: 14, 6: 36 } as const;

/**
 * IPv6 blocks that stand for IPv4 addresses or for no real client: a range of them would let
 * clients in through a translator or tunnel the company does not own (64:ff9b::/96 holds every
 * IPv4 address behind NAT64), or alias IPv4 networks the width rule never saw. Narrowest first,
 * so a refusal names the block the range is in.
 */
const SPECIAL_IPV6: ReadonlyArray<{ network: IpNetwork; name: string }> = [
  // Written as IPv6 here: parseNetwork reads ::ffff:0:0/96 as the IPv4 network 0.0.0.0/0.
  { network: { version: 6, text: '::ffff:0:0/96', prefix: 96 }, name: 'IPv4-mapped' },
  ...(
    [
      ['64:ff9b::/96', 'NAT64'],
      ['64:ff9b:1::/48', 'NAT64'],
      ['2001::/32', 'Teredo'],
      ['2002::/16', '6to4'],
      ['::/8', 'unspecified, loopback, IPv4-compatible'],
    ] as const
  ).map(([cidr, name]) => ({ network: parseNetwork(cidr) as IpNetwork, name })),
];

/**
 * An entry of a company's `allowedIps` as stored and matched (resources.md "Company"), or why it
 * may not relay: an address or CIDR, no wider than `MIN_PREFIX`, never a range of special-purpose
 * IPv6 addresses. A single address of those blocks is one client and is accepted (an IPv4-mapped
 * one becomes its IPv4 address).
 */
export function allowedNetwork(entry: string): IpNetwork | string {
  const network = parseNetwork(entry.trim());
  if (typeof network === 'string') return network;
  if (network.prefix < MIN_PREFIX[network.version]) {
    const written = entry.includes(':') && network.version === 4 ? ', /110 as IPv4-mapped IPv6' : '';
    return `${entry} is too wide: the prefix must be at least /${MIN_PREFIX[network.version]} for IPv${network.version}${written}`;
  }
  if (network.version === 6 && network.prefix < 128) {
    const special = SPECIAL_IPV6.find((block) => networksOverlap(network, block.network));
    if (special)
      return `${entry} is a range of special-purpose IPv6 addresses (${special.name}, ${special.network.text})`;
  }
  return network;
}

/** The reason `entry` may not be an allowed network, or null. */
export function allowedIpProblem(entry: string): string | null {
  const network = allowedNetwork(entry);
  return typeof network === 'string' ? network : null;
}

/** Normalised (see `allowedNetwork`) and deduplicated, in the order given. */
export function normalizeAllowedIps(ips: readonly string[]): string[] {
  return [
    ...new Set(
      ips.map((ip) => {
        const network = parseNetwork(ip.trim());
        return typeof network === 'string' ? ip.trim() : network.text;
      }),
    ),
  ];
}
