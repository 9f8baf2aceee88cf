import { normaliseDomainName } from '../domains/domain-name';

/**
 * The one normaliser of the facts that say who sent a message (integrations.md "Who sent it"):
 * relay usernames, client addresses and envelope senders, written one way for the relay
 * decision, log ingest, the milter and spam reports alike. Pure functions.
 */

/** What an envelope sender (MAIL FROM) says about the sending domain. */
export type SenderDomain =
  /** The null sender `<>` (bounces): attributed by the SASL username or the client address only. */
  | { kind: 'null' }
  /** A domain as domains are stored: lower case, IDNA in its ASCII form, no trailing dot. */
  | { kind: 'domain'; name: string }
  /**
   * A sender no verified domain can cover: a bare local part (`ceo`, which Postfix completes
   * with its own domain), an address literal (`ceo@[192.0.2.1]`), an empty domain (`ceo@`), a
   * domain that is not a hostname (`ceo@x%y`).
   */
  | { kind: 'none' };

const NULL_SENDER: SenderDomain = { kind: 'null' };
const NO_DOMAIN: SenderDomain = { kind: 'none' };

/** Plain lower-case ASCII hostnames of two labels or more, which IDNA leaves as they are. */
const PLAIN_HOSTNAME = /^(?:(?!-)[a-z0-9-]{1,63}(?<!-)\.)+(?!-)[a-z][a-z0-9-]{0,62}(?<!-)$/;

export function senderDomainOf(sender: string | null | undefined): SenderDomain {
  if (!sender || sender === '<>') return NULL_SENDER;
  // A quoted local part may hold `@`; a domain never does.
  const at = sender.lastIndexOf('@');
  if (at < 0) return NO_DOMAIN;
  const name = hostDomainName(sender.slice(at + 1));
  return name === null ? NO_DOMAIN : { kind: 'domain', name };
}

/**
 * A host name as domains are stored (lower case, IDNA in its ASCII form, no trailing dot), or
 * null when no company could verify it (empty, an address literal, not a hostname).
 */
export function hostDomainName(host: string): string | null {
  let domain = host.toLowerCase();
  if (domain.endsWith('.')) domain = domain.slice(0, -1);
  // The relay asks for every message: most domains are plain ASCII and skip the IDNA mapping.
  if (domain.length <= 253 && PLAIN_HOSTNAME.test(domain) && !domain.includes('xn--')) return domain;
  if (!domain || domain.startsWith('[') || domain.endsWith('.')) return null;
  const normalised = normaliseDomainName(domain);
  return 'name' in normalised ? normalised.name : null;
}

/** The domain of a sender as stored, or null when it has none that a company could verify. */
export function senderDomainName(sender: string | null | undefined): string | null {
  const domain = senderDomainOf(sender);
  return domain.kind === 'domain' ? domain.name : null;
}

/** Relay usernames are generated lower case and compared case-insensitively. */
export function normaliseRelayUsername(username: string): string {
  return username.trim().toLowerCase();
}
