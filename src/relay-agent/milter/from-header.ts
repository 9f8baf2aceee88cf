import addressparser from 'nodemailer/lib/addressparser';
import { senderDomainName } from '../../modules/attribution/sender-identity';

export interface FromAddress {
  address: string;
  /** As stored (lower case, IDNA ASCII, no trailing dot); null when no company could verify it. */
  domain: string | null;
  /** As written after the last `@`, '' when there is none. */
  written: string;
}

/** The mailboxes of a From: header value (8-bit bytes read as UTF-8), groups flattened. */
export function fromAddresses(rawValue: string): FromAddress[] {
  const value = Buffer.from(rawValue, 'latin1').toString('utf8').replace(/\r?\n/g, '');
  return addressparser(value, { flatten: true })
    .map((a) => a.address)
    .filter((address) => address !== '')
    .map((address) => {
      const at = address.lastIndexOf('@');
      return { address, domain: senderDomainName(address), written: at < 0 ? '' : address.slice(at + 1) };
    });
}

/** A domain as it may appear in an SMTP reply: no control or `%` characters, bounded. */
export function printableDomain(domain: string): string {
  return domain.replace(/[^A-Za-z0-9.\-_[\]:]/g, '?').slice(0, 255) || '(none)';
}
