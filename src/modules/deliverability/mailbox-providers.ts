// Which big mailbox provider a recipient's mail went to (deliverability.md, "Mailbox providers"):
// by the recipient's domain when it is one of the provider's own, otherwise by the next hop
// Postfix used, which is how a company's domain hosted by Google Workspace or Microsoft 365 shows.

export const MAILBOX_PROVIDERS = ['gmail', 'microsoft', 'yahoo', 'apple', 'other'] as const;
export type MailboxProvider = (typeof MAILBOX_PROVIDERS)[number];

/** The suffix after `hotmail.`, `live.` or `yahoo.`: one label (`com`, `fr`) or a country's `co.uk`, `com.au`. */
const ANY_TLD = String.raw`(?:[a-z]{2,}|(?:co|com|net|org|ne|or|ac)\.[a-z]{2})`;

const OWN_DOMAINS: ReadonlyArray<readonly [RegExp, MailboxProvider]> = [
  [/^(?:gmail|googlemail)\.com$/, 'gmail'],
  [new RegExp(String.raw`^(?:outlook\.com|msn\.com|(?:hotmail|live)\.${ANY_TLD})$`), 'microsoft'],
  [new RegExp(String.raw`^(?:aol\.com|ymail\.com|yahoo\.${ANY_TLD})$`), 'yahoo'],
  [/^(?:icloud|me|mac)\.com$/, 'apple'],
];

const NEXT_HOP_SUFFIXES: ReadonlyArray<readonly [string, MailboxProvider]> = [
  ['.google.com', 'gmail'],
  ['.googlemail.com', 'gmail'],
  ['.protection.outlook.com', 'microsoft'],
  ['.yahoodns.net', 'yahoo'],
  ['.icloud.com', 'apple'],
];

export function providerOf(recipient: string, relay: string | null): MailboxProvider {
  return byOwnDomain(domainOf(recipient)) ?? byNextHop(relayHost(relay)) ?? 'other';
}

/**
 * The host name of Postfix's `relay=` field (`gmail-smtp-in.l.google.com[142.250.4.27]:25`), lower
 * case; null for `none`, an empty field or no field.
 */
export function relayHost(relay: string | null): string | null {
  if (!relay) return null;
  const host = relay.split('[', 1)[0].replace(/:\d+$/, '').replace(/\.$/, '').trim().toLowerCase();
  return host === '' || host === 'none' ? null : host;
}

function domainOf(recipient: string): string {
  const at = recipient.lastIndexOf('@');
  return at < 0
    ? ''
    : recipient
        .slice(at + 1)
        .trim()
        .replace(/\.$/, '')
        .toLowerCase();
}

function byOwnDomain(domain: string): MailboxProvider | undefined {
  return OWN_DOMAINS.find(([pattern]) => pattern.test(domain))?.[1];
}

function byNextHop(host: string | null): MailboxProvider | undefined {
  if (host === null) return undefined;
  return NEXT_HOP_SUFFIXES.find(([suffix]) => host.endsWith(suffix))?.[1];
}
