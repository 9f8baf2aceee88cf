import { isIP } from 'node:net';

/**
 * IP addresses and networks written one way everywhere (integrations.md "Who sent it"): the same
 * client is the same text however a log line, a socket or a user wrote it. An IPv4 client seen
 * through an IPv6 socket (`::ffff:192.0.2.1`) is the IPv4 address; other IPv6 addresses are
 * written as RFC 5952 says (lower case, no leading zeros, the longest run of zero groups as `::`).
 */

/** An address or a network, normalised: IPv4-mapped IPv6 written as IPv4, host bits cleared. */
export interface IpNetwork {
  version: 4 | 6;
  /** `192.0.2.0/24`, `2001:db8::/48`; an address written without a prefix stays without one. */
  text: string;
  /** 32 or 128 for an address written without a prefix. */
  prefix: number;
}

type Address = { version: 4; value: number } | { version: 6; groups: number[] };

/**
 * The canonical text of an address, or null when `text` is not one. Accepts Postfix's `IPv6:`
 * prefix and drops a zone id (`fe80::1%eth0`).
 */
export function normaliseIp(text: string): string | null {
  const address = readAddress(text);
  return address && formatAddress(unmapped(address));
}

/**
 * An address or a CIDR (`address/prefix`) normalised, or the reason it is not one. A network of
 * IPv4-mapped IPv6 addresses (`::ffff:192.0.2.0/120`) becomes the IPv4 network it maps
 * (`192.0.2.0/24`); a wider one stays IPv6 (it holds more than IPv4).
 */
export function parseNetwork(entry: string): IpNetwork | string {
  const slash = entry.indexOf('/');
  const written = readAddress(slash === -1 ? entry : entry.slice(0, slash));
  if (!written) return `${entry} is not an IPv4 or IPv6 address or CIDR`;
  const max = written.version === 4 ? 32 : 128;
  let prefix = max;
  if (slash !== -1) {
    const prefixText = entry.slice(slash + 1);
    if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max) {
      return `${entry} has an invalid prefix length (0..${max})`;
    }
    prefix = Number(prefixText);
  }
  let address: Address = written;
  if (written.version === 6 && prefix >= 96 && isMapped(written.groups)) {
    address = unmapped(written);
    prefix -= 96;
  }
  const masked: Address =
    address.version === 4
      ? { version: 4, value: maskIpv4(address.value, prefix) }
      : { version: 6, groups: maskGroups(address.groups, prefix) };
  return {
    version: masked.version,
    text: slash === -1 ? formatAddress(masked) : `${formatAddress(masked)}/${prefix}`,
    prefix,
  };
}

/** Whether two networks share an address (then one holds the other). */
export function networksOverlap(a: IpNetwork, b: IpNetwork): boolean {
  if (a.version !== b.version) return false;
  const prefix = Math.min(a.prefix, b.prefix);
  const [addressA, addressB] = [a, b].map(({ text }) => text.split('/')[0]);
  return a.version === 4
    ? maskIpv4(ipv4Value(addressA), prefix) === maskIpv4(ipv4Value(addressB), prefix)
    : maskIpv6Hex(ipv6Hex(addressA), prefix) === maskIpv6Hex(ipv6Hex(addressB), prefix);
}

/** A dotted IPv4 address (already checked) as an unsigned 32-bit number. */
export function ipv4Value(address: string): number {
  const [a, b, c, d] = address.split('.').map(Number);
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

export function maskIpv4(value: number, prefix: number): number {
  return prefix === 0 ? 0 : (value & (-1 << (32 - prefix))) >>> 0;
}

/** An IPv6 address (already checked; `::`, a dotted IPv4 tail and a zone allowed) as 32 hex digits. */
export function ipv6Hex(address: string): string {
  return ipv6Groups(address)
    .map((group) => group.toString(16).padStart(4, '0'))
    .join('');
}

/**
 * The network of a prefix length as the hex digits it covers, the last one masked: a string, so
 * it can key a Map (V8 hashes a BigInt key by its low bits, all zero in a network's address).
 */
export function maskIpv6Hex(hex: string, prefix: number): string {
  const whole = prefix >> 2;
  const bits = prefix & 3;
  if (!bits) return hex.slice(0, whole);
  const digit = parseInt(hex[whole], 16) & (0xf0 >> bits) & 0xf;
  return hex.slice(0, whole) + digit.toString(16);
}

function readAddress(text: string): Address | null {
  const address = /^ipv6:/i.test(text) ? text.slice(5) : text;
  switch (isIP(address)) {
    case 4:
      return { version: 4, value: ipv4Value(address) };
    case 6:
      return { version: 6, groups: ipv6Groups(address) };
    default:
      return null;
  }
}

/** `::ffff:0:0/96`: the first 80 bits zero, the next 16 set. */
const isMapped = (groups: number[]): boolean =>
  groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;

const unmapped = (address: Address): Address =>
  address.version === 6 && isMapped(address.groups)
    ? { version: 4, value: ((address.groups[6] << 16) | address.groups[7]) >>> 0 }
    : address;

function formatAddress(address: Address): string {
  if (address.version === 4) {
    const { value } = address;
    return [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff].join('.');
  }
  const { groups } = address;
  // RFC 5952 4.2: the longest run of two or more zero groups, the first of equal runs.
  let runStart = -1;
  let runLength = 1;
  for (let i = 0; i < 8;) {
    let end = i;
    while (end < 8 && groups[end] === 0) end++;
    if (end - i > runLength) [runStart, runLength] = [i, end - i];
    i = Math.max(end, i + 1);
  }
  const hex = groups.map((group) => group.toString(16));
  if (runStart === -1) return hex.join(':');
  return `${hex.slice(0, runStart).join(':')}::${hex.slice(runStart + runLength).join(':')}`;
}

/** The eight 16-bit groups of an IPv6 address that isIP accepted. */
function ipv6Groups(address: string): number[] {
  const zone = address.indexOf('%');
  if (zone !== -1) address = address.slice(0, zone);
  const groupsOf = (part: string): number[] => {
    if (part === '') return [];
    return part.split(':').flatMap((piece) => {
      if (!piece.includes('.')) return [parseInt(piece, 16)];
      const v4 = ipv4Value(piece);
      return [v4 >>> 16, v4 & 0xffff];
    });
  };
  const gap = address.indexOf('::');
  const head = groupsOf(gap === -1 ? address : address.slice(0, gap));
  const tail = gap === -1 ? [] : groupsOf(address.slice(gap + 2));
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

function maskGroups(groups: number[], prefix: number): number[] {
  return groups.map((group, i) => {
    const bits = Math.min(Math.max(prefix - 16 * i, 0), 16);
    return group & ((0xffff << (16 - bits)) & 0xffff);
  });
}
