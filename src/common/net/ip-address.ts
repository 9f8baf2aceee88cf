import * as ipaddr from 'ipaddr.js';
import { isIP } from 'node:net';

/**
 * IP addresses and networks written one way everywhere (integrations.md "Who sent it"): the same
 * client is the same text however a log line, a socket or a user wrote it. An IPv4 client seen
 * through an IPv6 socket (`::ffff:192.0.2.1`) is the IPv4 address; other IPv6 addresses are
 * written as RFC 5952 says (lower case, no leading zeros, the longest run of zero groups as `::`).
 *
 * ipaddr.js reads, masks, matches and writes them; node:net's isIP says what is an address at
 * all, since ipaddr.js alone also takes inet_aton's forms (`127.1`, `0x7f.0.0.1`, `010.0.0.1` as
 * octal). What isIP accepts is handed to ipaddr.js as `ipv6Text` says.
 */

/** An address or a network, normalised: IPv4-mapped IPv6 written as IPv4, host bits cleared. */
export interface IpNetwork {
  version: 4 | 6;
  /** `192.0.2.0/24`, `2001:db8::/48`; an address written without a prefix stays without one. */
  text: string;
  /** 32 or 128 for an address written without a prefix. */
  prefix: number;
}

/**
 * The canonical text of an address, or null when `text` is not one. Accepts Postfix's `IPv6:`
 * prefix and drops a zone id (`fe80::1%eth0`).
 */
export function normaliseIp(text: string): string | null {
  const address = readable(text);
  return address && ipaddr.process(address).toString();
}

/**
 * An address or a CIDR (`address/prefix`) normalised, or the reason it is not one. A network of
 * IPv4-mapped IPv6 addresses (`::ffff:192.0.2.0/120`) becomes the IPv4 network it maps
 * (`192.0.2.0/24`); a wider one stays IPv6 (it holds more than IPv4).
 */
export function parseNetwork(entry: string): IpNetwork | string {
  const slash = entry.indexOf('/');
  const address = readable(slash === -1 ? entry : entry.slice(0, slash));
  if (!address) return `${entry} is not an IPv4 or IPv6 address or CIDR`;
  const max = address.includes(':') ? 128 : 32;
  let prefix = max;
  if (slash !== -1) {
    const prefixText = entry.slice(slash + 1);
    if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max) {
      return `${entry} has an invalid prefix length (0..${max})`;
    }
    prefix = Number(prefixText);
  }
  const plain = prefix >= 96 ? ipaddr.process(address) : ipaddr.parse(address);
  if (max === 128 && plain.kind() === 'ipv4') prefix -= 96;
  const mask = (plain.kind() === 'ipv4' ? ipaddr.IPv4 : ipaddr.IPv6)
    .subnetMaskFromPrefixLength(prefix)
    .toByteArray();
  const network = ipaddr.fromByteArray(plain.toByteArray().map((byte, i) => byte & mask[i]));
  return {
    version: plain.kind() === 'ipv4' ? 4 : 6,
    text: slash === -1 ? network.toString() : `${network.toString()}/${prefix}`,
    prefix,
  };
}

/** Whether two networks share an address (then one holds the other). */
export function networksOverlap(a: IpNetwork, b: IpNetwork): boolean {
  if (a.version !== b.version) return false;
  const prefix = Math.min(a.prefix, b.prefix);
  const [addressA, addressB] = [a, b].map(({ text }) => text.split('/')[0]);
  return a.version === 4
    ? ipaddr.IPv4.parse(addressA).match(ipaddr.IPv4.parse(addressB), prefix)
    : ipaddr.IPv6.parse(ipv6Text(addressA)).match(ipaddr.IPv6.parse(ipv6Text(addressB)), prefix);
}

/** A dotted IPv4 address (already checked) as an unsigned 32-bit number. */
export function ipv4Value(address: string): number {
  const [a, b, c, d] = ipaddr.IPv4.parse(address).octets;
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

export function maskIpv4(value: number, prefix: number): number {
  return prefix === 0 ? 0 : (value & (-1 << (32 - prefix))) >>> 0;
}

/** An IPv6 address (already checked; `::`, a dotted IPv4 tail and a zone allowed) as 32 hex digits. */
export function ipv6Hex(address: string): string {
  return ipaddr.IPv6.parse(ipv6Text(address))
    .parts.map((group) => group.toString(16).padStart(4, '0'))
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

/** `text` (Postfix's `IPv6:` prefix allowed) as ipaddr.js is to read it, or null when isIP refuses it. */
function readable(text: string): string | null {
  const address = /^ipv6:/i.test(text) ? text.slice(5) : text;
  switch (isIP(address)) {
    case 4:
      return address;
    case 6:
      return ipv6Text(address);
    default:
      return null;
  }
}

/**
 * An IPv6 address that isIP accepted, as ipaddr.js reads it as written: without its zone id
 * (ipaddr.js takes only letters and digits there, isIP any), and a dotted IPv4 tail as two hex
 * groups (ipaddr.js reads `::192.0.2.1`, IPv4-compatible, as `::ffff:192.0.2.1`, IPv4-mapped).
 */
function ipv6Text(address: string): string {
  const zone = address.indexOf('%');
  if (zone !== -1) address = address.slice(0, zone);
  if (!address.includes('.')) return address;
  const tail = address.lastIndexOf(':') + 1;
  const [a, b, c, d] = ipaddr.IPv4.parse(address.slice(tail)).octets;
  return `${address.slice(0, tail)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}
