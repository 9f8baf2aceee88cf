import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { IPv4, IPv6 } from 'ipaddr.js';

/** The longest webhook URL accepted. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** One address a host name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has. */
export type WebhookLookup = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** A checked webhook URL, or the reason it is refused (a sentence for a 400 answer). */
export type WebhookUrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

/** What a webhook URL may be. */
export interface WebhookUrlOptions {
  /** Whether http:// is accepted besides https://. */
  allowHttp: boolean;
  /** Whether the host may be (or resolve to) a loopback, private or otherwise non-public address. */
  allowPrivateTargets: boolean;
  /** How host names are resolved; the system resolver (getaddrinfo) when absent. */
  lookup?: WebhookLookup;
}

/** The system resolver (getaddrinfo, as connections use it), every address of the host. */
export const systemLookup: WebhookLookup = (hostname) => dnsLookup(hostname, { all: true });

interface Ipv4Rule {
  range: [IPv4, number];
  kind: string;
}

interface Ipv6Rule {
  range: [IPv6, number];
  kind: string;
}

/** IPv6 ranges that carry an IPv4 address: such an address is judged by the IPv4 one inside. */
interface Ipv4Embedding {
  range: [IPv6, number];
  /** Byte offset of the IPv4 address in the IPv6 one. */
  at: number;
  /** Set when the form is refused even around a public IPv4 address. */
  kindWhenPublic?: string;
}

function ipv4Rules(rules: [string, string][]): Ipv4Rule[] {
  return rules.map(([cidr, kind]) => ({ range: IPv4.parseCIDR(cidr), kind }));
}

function ipv6Rules(rules: [string, string][]): Ipv6Rule[] {
  return rules.map(([cidr, kind]) => ({ range: IPv6.parseCIDR(cidr), kind }));
}

// First match wins, so a narrower range comes before the range that holds it.
const REFUSED_IPV4 = ipv4Rules([
  ['0.0.0.0/32', 'an unspecified address'],
  ['0.0.0.0/8', 'a "this network" address'],
  ['10.0.0.0/8', 'a private address'],
  ['100.64.0.0/10', 'a shared (CGNAT) address'],
  ['127.0.0.0/8', 'a loopback address'],
  ['169.254.0.0/16', 'a link-local address'],
  ['172.16.0.0/12', 'a private address'],
  ['192.0.0.0/24', 'an IETF protocol assignment address'],
  ['192.0.2.0/24', 'a documentation address'],
  ['192.88.99.0/24', 'a 6to4 relay anycast address'],
  ['192.168.0.0/16', 'a private address'],
  ['198.18.0.0/15', 'a benchmarking address'],
  ['198.51.100.0/24', 'a documentation address'],
  ['203.0.113.0/24', 'a documentation address'],
  ['224.0.0.0/4', 'a multicast address'],
  ['255.255.255.255/32', 'a broadcast address'],
  ['240.0.0.0/4', 'a reserved address'],
]);

const REFUSED_IPV6 = ipv6Rules([
  ['::/128', 'an unspecified address'],
  ['::1/128', 'a loopback address'],
  ['64:ff9b:1::/48', 'a local-use NAT64 address'],
  ['100::/64', 'a discard-only address'],
  ['2001::/32', 'a Teredo address'],
  ['2001:2::/48', 'a benchmarking address'],
  ['2001:db8::/32', 'a documentation address'],
  ['3fff::/20', 'a documentation address'],
  ['fc00::/7', 'a unique-local address'],
  ['fe80::/10', 'a link-local address'],
  ['fec0::/10', 'a site-local address'],
  ['ff00::/8', 'a multicast address'],
]);

const IPV4_EMBEDDINGS: Ipv4Embedding[] = [
  { range: IPv6.parseCIDR('::ffff:0:0/96'), at: 12 }, // IPv4-mapped
  { range: IPv6.parseCIDR('::ffff:0:0:0/96'), at: 12 }, // IPv4-translated (SIIT)
  { range: IPv6.parseCIDR('64:ff9b::/96'), at: 12 }, // NAT64 well-known prefix
  { range: IPv6.parseCIDR('2002::/16'), at: 2 }, // 6to4
  { range: IPv6.parseCIDR('::/96'), at: 12, kindWhenPublic: 'a deprecated IPv4-compatible address' },
];

const GLOBAL_UNICAST_IPV6: [IPv6, number] = IPv6.parseCIDR('2000::/3');

function refusedIpv4Reason(address: IPv4): string | null {
  return REFUSED_IPV4.find((rule) => address.match(rule.range))?.kind ?? null;
}

function refusedIpv6Reason(address: IPv6): string | null {
  const refused = REFUSED_IPV6.find((rule) => address.match(rule.range));
  if (refused) return refused.kind;
  const embedding = IPV4_EMBEDDINGS.find((rule) => address.match(rule.range));
  if (embedding) {
    const bytes = address.toByteArray().slice(embedding.at, embedding.at + 4);
    return refusedIpv4Reason(new IPv4(bytes)) ?? embedding.kindWhenPublic ?? null;
  }
  return address.match(GLOBAL_UNICAST_IPV6) ? null : 'a reserved address';
}

/**
 * Why webhooks may not go to this IP address (e.g. "a private address"), or null when it is public.
 * Anything but an IPv4 or IPv6 address is refused.
 */
export function refusedAddressReason(address: string): string | null {
  switch (isIP(address)) {
    case 4:
      return refusedIpv4Reason(IPv4.parse(address));
    case 6:
      return refusedIpv6Reason(IPv6.parse(address));
    default:
      return 'not an IP address';
  }
}

/** Whether webhooks may go to this IP address. */
export function isPublicAddress(address: string): boolean {
  return refusedAddressReason(address) === null;
}

/** The host of a URL as an IP address (IPv6 without its brackets), or null when it is a name. */
export function ipLiteralHost(url: URL): string | null {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) ? host : null;
}

/** The checks of a webhook URL that need no DNS: length, syntax, scheme and credentials. */
export function checkWebhookUrlSyntax(url: string, options: { allowHttp: boolean }): WebhookUrlCheck {
  if (url.length > MAX_WEBHOOK_URL_LENGTH) {
    return { ok: false, reason: `Webhook URL must be at most ${MAX_WEBHOOK_URL_LENGTH} characters` };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'Webhook URL is not a valid URL' };
  }
  const httpAllowed = options.allowHttp && parsed.protocol === 'http:';
  if (parsed.protocol !== 'https:' && !httpAllowed) {
    return {
      ok: false,
      reason: options.allowHttp ? 'Webhook URL must use https or http' : 'Webhook URL must use https',
    };
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return { ok: false, reason: 'Webhook URL must not contain credentials' };
  }
  return { ok: true, url: parsed };
}

/**
 * The check of a webhook URL when an endpoint is created: its syntax, then (unless private targets
 * are allowed) that its host is a public address or resolves only to public ones. A host name that
 * does not resolve now is accepted: every attempt checks the addresses it connects to.
 */
export async function checkWebhookUrl(url: string, options: WebhookUrlOptions): Promise<WebhookUrlCheck> {
  const checked = checkWebhookUrlSyntax(url, options);
  if (!checked.ok || options.allowPrivateTargets) return checked;
  const literal = ipLiteralHost(checked.url);
  if (literal !== null) {
    const kind = refusedAddressReason(literal);
    return kind === null ? checked : { ok: false, reason: `Webhook URL points to ${kind} (${literal})` };
  }
  let resolved: readonly ResolvedAddress[];
  try {
    resolved = await (options.lookup ?? systemLookup)(checked.url.hostname);
  } catch {
    return checked;
  }
  for (const { address } of resolved) {
    const kind = refusedAddressReason(address);
    if (kind !== null) return { ok: false, reason: `Webhook URL resolves to ${kind} (${address})` };
  }
  return checked;
}
