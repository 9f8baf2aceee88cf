import type { RelayDecision, RelayQuery } from '../../modules/internal/relay-decision';

/** One policy request: Postfix's `name=value` attributes (SMTPD_POLICY_README), those the agent reads. */
export type PolicyAttributes = Map<string, string>;

/** A request larger than this is not Postfix talking: the connection is closed. */
export const MAX_REQUEST_BYTES = 64 * 1024;

/** The attributes toRelayQuery reads: the only ones a parser keeps by default. */
export const RELAY_QUERY_ATTRIBUTES: readonly string[] = [
  'request',
  'protocol_state',
  'sasl_username',
  'client_address',
  'sender',
  'recipient',
  'size',
];

export class PolicyProtocolError extends Error {}

const LF = 0x0a;
const CR = 0x0d;
const EQUALS = 0x3d;

/**
 * Splits a connection's bytes into requests: `name=value` lines, an empty line ending each.
 * Lines may end in LF or CRLF; a request may arrive in pieces, and several in one chunk. What was
 * pushed is taken one request at a time, so a server can stop taking while its answers wait.
 *
 * What one connection holds is bounded by the bytes, not the lines: each line is read as it
 * comes and only the attributes in `keep` are kept (Postfix sends some thirty; a client sending
 * thousands of names would otherwise make a map many times its bytes), the part of a line not
 * yet ended is copied out of its socket read, and a request over MAX_REQUEST_BYTES is an error.
 */
export class PolicyRequestParser {
  /** Chunks pushed and not yet read; the first from `offset` on. */
  private readonly unread: Buffer[] = [];
  private offset = 0;
  /** The current line's bytes before its LF, copied out of their chunks. */
  private readonly partial: Buffer[] = [];
  private partialBytes = 0;
  private current: PolicyAttributes = new Map();
  /** Attributes of the current request (`name=value` lines), kept or not. */
  private attributes = 0;
  private currentBytes = 0;
  private readonly keep: ReadonlySet<string>;

  constructor(keep: Iterable<string> = RELAY_QUERY_ATTRIBUTES) {
    this.keep = new Set(keep);
  }

  /** Keeps a chunk of the connection for next(). */
  push(chunk: Buffer | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    if (bytes.length > 0) this.unread.push(bytes);
  }

  /**
   * The next complete request, or null until more comes. Throws PolicyProtocolError on an
   * oversized request, and on an empty one: an empty line ends a request only after an attribute.
   */
  next(): PolicyAttributes | null {
    for (let line = this.nextLine(); line !== null; line = this.nextLine()) {
      if (line.length === 0) {
        if (this.attributes === 0) throw new PolicyProtocolError('Empty policy request');
        const request = this.current;
        this.current = new Map();
        this.attributes = 0;
        this.currentBytes = 0;
        return request;
      }
      const eq = line.indexOf(EQUALS);
      // A line without `=` is not an attribute; Postfix never sends one, so it is ignored.
      if (eq <= 0) continue;
      this.attributes += 1;
      const name = line.toString('utf8', 0, eq);
      if (this.keep.has(name)) this.current.set(name, line.toString('utf8', eq + 1));
    }
    return null;
  }

  /** The next line without its LF (and CR), or null until its LF comes; counts it against the limit. */
  private nextLine(): Buffer | null {
    while (this.unread.length > 0) {
      const chunk = this.unread[0];
      const newline = chunk.indexOf(LF, this.offset);
      if (newline === -1) {
        const rest = chunk.subarray(this.offset);
        this.unread.shift();
        this.offset = 0;
        this.grow(rest.length);
        // A copy: the fragment alone is kept, not the whole socket read it came in.
        this.partial.push(Buffer.from(rest));
        continue;
      }
      const piece = chunk.subarray(this.offset, newline);
      this.offset = newline + 1;
      if (this.offset === chunk.length) {
        this.unread.shift();
        this.offset = 0;
      }
      this.grow(piece.length + 1);
      let line = piece;
      if (this.partial.length > 0) {
        line = Buffer.concat([...this.partial, piece]);
        this.partial.length = 0;
      }
      this.currentBytes += this.partialBytes;
      this.partialBytes = 0;
      return line.length > 0 && line[line.length - 1] === CR ? line.subarray(0, line.length - 1) : line;
    }
    return null;
  }

  /** Counts `bytes` more of the current line; throws once the request is over the limit. */
  private grow(bytes: number): void {
    this.partialBytes += bytes;
    if (this.currentBytes + this.partialBytes > MAX_REQUEST_BYTES) {
      throw new PolicyProtocolError('Policy request too large');
    }
  }
}

/**
 * The relay decision's question for one policy request, or null when the request is not one the
 * service can judge (not the RCPT stage, or nothing that identifies a company): `DUNNO` then.
 */
export function toRelayQuery(attributes: PolicyAttributes): RelayQuery | null {
  if (attributes.get('request') !== 'smtpd_access_policy') return null;
  const state = attributes.get('protocol_state');
  if (state !== undefined && state.toUpperCase() !== 'RCPT') return null;
  const relayUsername = attributes.get('sasl_username') || undefined;
  const clientAddress = attributes.get('client_address') || undefined;
  const sender = attributes.get('sender') || undefined;
  if (!relayUsername && !clientAddress && !sender) return null;
  const recipient = attributes.get('recipient');
  const size = Number(attributes.get('size'));
  return {
    ...(relayUsername && { relayUsername }),
    ...(clientAddress && { clientAddress }),
    // The null sender (a bounce) is an empty string: no sender domain to verify.
    sender: sender ?? '',
    ...(recipient && { recipients: [recipient] }),
    ...(Number.isSafeInteger(size) && size > 0 && { size }),
  };
}

/** The reply: `action=<word and text>` and the empty line. Newlines in the text would end it early. */
export function formatReply(action: string): string {
  return `action=${action.replace(/[\r\n]+/g, ' ')}\n\n`;
}

/**
 * The decision's action as Postfix should apply it here. `DEFER_IF_PERMIT` defers only when a
 * later restriction permits; after the contract's `check_policy_service …, reject` the `reject`
 * wins, and a temporary refusal (quota, expired period) would bounce the mail for good. `DEFER`
 * answers 450 whatever follows, which is what "retry after payment" needs.
 */
export function postfixAction(action: string): string {
  return action.startsWith('DEFER_IF_PERMIT ') ? `DEFER ${action.slice('DEFER_IF_PERMIT '.length)}` : action;
}

/**
 * The reply to one RCPT request. A refusal of the whole message wins; an allowed message whose
 * recipient (the request's only one) is on the company's or the global suppression list has that
 * recipient refused alone: Postfix answers its RCPT with 554 5.7.1, the other recipients go on.
 */
export function policyAction(
  decision: Pick<RelayDecision, 'action'> & Partial<Pick<RelayDecision, 'rejectedRecipients'>>,
): string {
  const suppressed = decision.rejectedRecipients?.[0];
  if (decision.action === 'OK' && suppressed) {
    return `REJECT recipient suppressed (${suppressed.reason})`;
  }
  return postfixAction(decision.action);
}
