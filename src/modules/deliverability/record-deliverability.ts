import type { CleanStatus } from '../log-index/clean-record';
import { BounceCategory, BounceType, classifyBounce } from './bounce-classifier';
import { MailboxProvider, providerOf } from './mailbox-providers';

/** The bounce types of deliverability.md, for validation and the OpenAPI document. */
export const BOUNCE_TYPES: readonly BounceType[] = ['hard', 'soft', 'block'];

/**
 * The outcomes that carry a bounce class (deliverability.md "Bounce classes"): a failure reported
 * by the next hop or a provider. A `rejected` record is our own relay's refusal at RCPT (the
 * suppression list, the quota, an unknown client): the next hop never saw it, and it must not
 * count against the sender's standing with a mailbox provider.
 */
export const FAILED_STATUSES: ReadonlySet<CleanStatus> = new Set(['deferred', 'bounced', 'expired']);

/** What a clean record carries of deliverability.md: its mailbox provider and, for a failure, its bounce class. */
export interface RecordDeliverability {
  provider: MailboxProvider;
  bounceType: BounceType | null;
  bounceCategory: BounceCategory | null;
  bounceRule: string | null;
}

/** Decided when the record is built, from its recipient, next hop and the reply of its outcome. */
export function deliverabilityOf(r: {
  status: CleanStatus;
  to: string;
  dsn: string | null;
  response: string | null;
  relay: string | null;
}): RecordDeliverability {
  const provider = providerOf(r.to, r.relay);
  if (!FAILED_STATUSES.has(r.status))
    return { provider, bounceType: null, bounceCategory: null, bounceRule: null };
  const bounce = classifyBounce({ dsn: r.dsn, response: r.response, relay: r.relay });
  return { provider, bounceType: bounce.type, bounceCategory: bounce.category, bounceRule: bounce.rule };
}
