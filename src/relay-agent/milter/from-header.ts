import libmime from 'libmime';
import addressparser from 'nodemailer/lib/addressparser';
import { hostDomainName, senderDomainName } from '../../modules/attribution/sender-identity';

export interface FromAddress {
  address: string;
  /** As stored (lower case, IDNA ASCII, no trailing dot); null when no company could verify it. */
  domain: string | null;
  /** As written after the last `@`, '' when there is none. */
  written: string;
}

/**
 * Why a From: header cannot be judged for alignment (integrations.md "Milter", "From alignment"):
 * a receiver aligns DMARC on the one domain of a plain mailbox, so a group, a mailbox without an
 * address or a quoted local part holding `@` can pass nowhere, and a display name naming another
 * domain's address is the spoof DMARC does not see.
 */
export type FromProblem = 'group' | 'no_address' | 'quoted_at' | 'display_name';

export type FromHeader = { addresses: FromAddress[] } | { problem: FromProblem };

/** An address written inside a display name or comment: something@host.tld. */
const WRITTEN_ADDRESS = /[^\s<>"'(),;:[\]\\@]+@([^\s<>"'(),;:[\]\\@]+)/g;

/**
 * The mailboxes of a From: header value (8-bit bytes read as UTF-8), or what makes it one no
 * receiver can align. Encoded words are decoded and the text is NFKC-normalised (full-width `＠`
 * and letters become ASCII) before display names and comments are searched for addresses.
 */
export function parseFromHeader(rawValue: string): FromHeader {
  const value = Buffer.from(rawValue, 'latin1').toString('utf8').replace(/\r?\n/g, '');
  const entries = addressparser(value);
  if (entries.length === 0) return { problem: 'no_address' };
  const addresses: FromAddress[] = [];
  for (const entry of entries) {
    if ('group' in entry && entry.group) return { problem: entry.group.length ? 'group' : 'no_address' };
    if (!entry.address) return { problem: 'no_address' };
    const at = entry.address.lastIndexOf('@');
    if (at < 0) return { problem: 'no_address' };
    if (entry.address.slice(0, at).includes('@')) return { problem: 'quoted_at' };
    addresses.push({
      address: entry.address,
      domain: senderDomainName(entry.address),
      written: entry.address.slice(at + 1),
    });
  }
  if (namesAnotherDomain(value, addresses)) return { problem: 'display_name' };
  return { addresses };
}

/**
 * Whether the header's text outside its addresses (display names, comments) writes an e-mail
 * address of a domain none of its mailboxes has: `"ceo@bank.test" <x@acme.test>`, encoded or not.
 */
function namesAnotherDomain(value: string, addresses: FromAddress[]): boolean {
  let text = libmime.decodeWords(value).normalize('NFKC');
  for (const { address } of addresses) text = text.split(address).join(' ');
  const domains = new Set(addresses.map((a) => a.domain ?? a.written.toLowerCase()));
  for (const match of text.matchAll(WRITTEN_ADDRESS)) {
    const host = match[1].replace(/[.]+$/, '');
    if (!host.includes('.')) continue;
    const domain = hostDomainName(host) ?? host.toLowerCase();
    if (!domains.has(domain)) return true;
  }
  return false;
}

/** A domain as it may appear in an SMTP reply: no control or `%` characters, bounded. */
export function printableDomain(domain: string): string {
  return domain.replace(/[^A-Za-z0-9.\-_[\]:]/g, '?').slice(0, 255) || '(none)';
}
