import type { RelayDecision, RelayQuery } from '../modules/internal/relay-decision';

/** One policy request: Postfix's `name=value` attributes (SMTPD_POLICY_README). */
export type PolicyAttributes = Map<string, string>;

/** A request larger than this is not Postfix talking: the connection is closed. */
export const MAX_REQUEST_BYTES = 64 * 1024;

export class PolicyProtocolError extends Error {}

/**
 * Splits a connection's bytes into requests: `name=value` lines, an empty line ending each.
 * Lines may end in LF or CRLF; a request may arrive in pieces, and several in one chunk. What was
 * pushed is taken one request at a time, so a server can stop taking while its answers wait.
 */
export class PolicyRequestParser {
  private buffer = '';
  private current: PolicyAttributes = new Map();
  private currentBytes = 0;

  /** Keeps a chunk of the connection for next(). */
  push(chunk: string): void {
    this.buffer += chunk;
  }

  /**
   * The next complete request, or null until more comes. Throws PolicyProtocolError on an
   * oversized request, and on an empty one: an empty line ends a request only after an attribute.
   */
  next(): PolicyAttributes | null {
    let newline: number;
    while ((newline = this.buffer.indexOf('\n')) !== -1) {
      const line = this.buffer.slice(0, newline).replace(/\r$/, '');
      this.buffer = this.buffer.slice(newline + 1);
      this.currentBytes += newline + 1;
      if (this.currentBytes > MAX_REQUEST_BYTES) throw new PolicyProtocolError('Policy request too large');
      if (line === '') {
        if (this.current.size === 0) throw new PolicyProtocolError('Empty policy request');
        const request = this.current;
        this.current = new Map();
        this.currentBytes = 0;
        return request;
      }
      const eq = line.indexOf('=');
      // A line without `=` is not an attribute; Postfix never sends one, so it is ignored.
      if (eq > 0) this.current.set(line.slice(0, eq), line.slice(eq + 1));
    }
    if (this.currentBytes + this.buffer.length > MAX_REQUEST_BYTES) {
      throw new PolicyProtocolError('Policy request too large');
    }
    return null;
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
