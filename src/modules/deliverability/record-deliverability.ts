import type { CleanStatus } from '../log-index/clean-record';
import { Bounce, BounceCategory, BounceType, classifyBounce } from './bounce-classifier';
import { MailboxProvider, providerOf } from './mailbox-providers';

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
  /** A mail provider's own verdict when its bounce event decided the outcome (`hard` / `soft`). */
  providerBounceKind?: string | null;
}): RecordDeliverability {
  const provider = providerOf(r.to, r.relay);
  if (!FAILED_STATUSES.has(r.status))
    return { provider, bounceType: null, bounceCategory: null, bounceRule: null };
  const bounce = providerEventBounce(r.providerBounceKind ?? null, r.dsn, r.response, r.relay);
  return { provider, bounceType: bounce.type, bounceCategory: bounce.category, bounceRule: bounce.rule };
}

/**
 * The class of a reply a mail provider reported with its own verdict: the rules first (a block
 * stays a block whatever the provider calls it: it must never suppress the recipient); when none
 * matched, the provider's hard or soft rather than the reply's class alone.
 */
export function providerEventBounce(
  kind: string | null,
  dsn: string | null,
  response: string | null,
  relay: string | null = null,
): Bounce {
  const bounce = classifyBounce({ dsn, response, relay });
  if (bounce.category !== 'other') return bounce;
  if (kind === 'hard' || kind === 'soft') return { type: kind, category: 'other', rule: `provider-${kind}` };
  // SparkPost's block classes (50–54): the receiving side refused the sender.
  if (kind === 'block') return { type: 'block', category: 'policy', rule: 'provider-block' };
  return bounce;
}
