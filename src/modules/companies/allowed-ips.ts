import { isIP } from 'node:net';

export const MAX_ALLOWED_IPS = 50;

/**
 * The narrowest prefix accepted for a network that may relay without SMTP authentication.
 * Wider ranges would turn the relay into an open relay for a large part of the Internet; the
 * mailbox suites publish /14 or narrower for IPv4 and /36 or narrower for IPv6.
 */
export const MIN_PREFIX = { 4: 8, 6: 16 } as const;

/**
 * `entry` is an IPv4/IPv6 address or a CIDR (`address/prefix`) with the prefix in
 * `MIN_PREFIX..32` (IPv4) or `MIN_PREFIX..128` (IPv6). Returns the reason it is not, or null.
 */
export function allowedIpProblem(entry: string): string | null {
  const slash = entry.indexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const version = isIP(address);
  if (version !== 4 && version !== 6) return `${entry} is not an IPv4 or IPv6 address or CIDR`;
  if (slash === -1) return null;
  const prefix = entry.slice(slash + 1);
  const max = version === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) {
    return `${entry} has an invalid prefix length (0..${max})`;
  }
  if (Number(prefix) < MIN_PREFIX[version]) {
    return `${entry} is too wide: the prefix must be at least /${MIN_PREFIX[version]}`;
  }
  return null;
}

/** Lower-cased (IPv6 hex digits), trimmed and deduplicated, in the order given. */
export function normalizeAllowedIps(ips: readonly string[]): string[] {
  return [...new Set(ips.map((ip) => ip.trim().toLowerCase()))];
}
