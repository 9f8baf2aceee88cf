import addressparser from 'nodemailer/lib/addressparser';
import { BadRequestError } from '../../common/errors/domain-error';

/** What the relay is given, kept in the message's row until the relay took it (`content`, JSON). */
export type EmailContent =
  | {
      kind: 'compose';
      text?: string;
      html?: string;
      headers?: Record<string, string>;
      attachments?: Array<{ filename: string; content: string; contentType?: string; contentId?: string }>;
    }
  | { kind: 'raw'; raw: string };

/** `local@domain`: no spaces or angle brackets, one `@` that is not at either end. */
const ADDRESS = /^[^\s<>@",;]+(?:@[^\s<>@",;]+)$/;

/** One address of a header field: its addr-spec and the text as given. */
export interface ParsedAddress {
  address: string;
  text: string;
}

/**
 * The addresses of a field's entries (`"Name <addr>"` or `addr`), by nodemailer's address
 * parser; 400 naming the field when an entry is not exactly one address.
 */
export function parseAddresses(field: string, entries: readonly string[]): ParsedAddress[] {
  return entries.map((text) => {
    const parsed = addressparser(text, { flatten: true });
    const address = parsed.length === 1 ? parsed[0].address : '';
    if (!address || !ADDRESS.test(address)) {
      throw new BadRequestError(`${field}: "${text.slice(0, 100)}" is not an e-mail address`);
    }
    return { address, text: text.trim() };
  });
}

/** A bare envelope address (MAIL FROM, RCPT TO of a raw message). */
export function envelopeAddress(field: string, text: string): string {
  const address = text.trim();
  if (!ADDRESS.test(address))
    throw new BadRequestError(`${field}: "${text.slice(0, 100)}" is not an e-mail address`);
  return address;
}

/** Bytes a base64 text decodes to (without decoding it). */
export function base64Bytes(text: string): number {
  const clean = text.replace(/[\s]/g, '');
  const padding = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  return Math.floor((clean.length * 3) / 4) - padding;
}

/** The end of a message's header block (the index of its empty line), or the message's length. */
function headerEnd(raw: Buffer): number {
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  const ends = [crlf, lf].filter((i) => i >= 0);
  return ends.length ? Math.min(...ends) : raw.length;
}

/** A header field's value (unfolded, as written: encoded words are left as they are), or null. */
export function headerValue(raw: Buffer, name: string): string | null {
  const head = raw
    .subarray(0, headerEnd(raw))
    .toString('latin1')
    .replace(/\r?\n[ \t]+/g, ' ');
  const line = head.split(/\r?\n/).find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line === undefined ? null : line.slice(name.length + 1).trim();
}

/** The message with a `Message-ID` field first, when it has none. */
export function withMessageId(raw: Buffer, messageId: string): Buffer {
  if (headerValue(raw, 'Message-ID') !== null) return raw;
  return Buffer.concat([Buffer.from(`Message-ID: ${messageId}\r\n`, 'latin1'), raw]);
}
