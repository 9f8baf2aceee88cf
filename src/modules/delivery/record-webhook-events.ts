import type { CleanEvent, CleanRecord } from '../log-index/clean-record';
import type { EmailLink } from '../emails/email-links';
import type { NewWebhookEvent } from '../webhooks/webhook-outbox';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../webhooks/webhook-event-types';
import { Bounce, classifyBounce } from '../deliverability/bounce-classifier';

/** The outcomes whose event says why it failed (deliverability.md "Bounce classes"). */
const FAILURES: ReadonlySet<WebhookEventType> = new Set(['email.bounced', 'email.deferred', 'email.expired']);

const eventKey = (e: CleanEvent) => JSON.stringify([e.at, e.status, e.dsn, e.response]);

/**
 * The webhook events a rebuild brings (platform.md "Event types and payload"): one per outcome a
 * record gained (a delivery attempt, its expiry, a provider event), of a record with a company.
 * An outcome is named by the record and its content, so the same line or provider event arriving
 * again makes no second event.
 */
export function recordWebhookEvents(
  changed: readonly CleanRecord[],
  before: ReadonlyMap<string, CleanRecord>,
  links: ReadonlyMap<string, EmailLink> = new Map(),
): NewWebhookEvent[] {
  const events: NewWebhookEvent[] = [];
  for (const record of changed) {
    if (record.companyId === null || record.companyUuid === null) continue;
    const known = new Set((before.get(record.id)?.events ?? []).map(eventKey));
    const link = links.get(record.id);
    for (const outcome of record.events) {
      const key = eventKey(outcome);
      const type = `email.${outcome.status}` as WebhookEventType;
      if (known.has(key) || !WEBHOOK_EVENT_TYPES.includes(type)) continue;
      known.add(key);
      events.push({
        companyId: record.companyId,
        type,
        domain: record.senderDomain,
        recordId: record.id,
        fact: `${record.id}\n${key}`,
        data: {
          recordId: record.id,
          messageId: record.messageId,
          companyUuid: record.companyUuid,
          domain: record.senderDomain,
          from: record.from,
          to: record.to,
          status: outcome.status,
          at: outcome.at,
          dsn: outcome.dsn,
          response: outcome.response,
          relay: record.relay,
          attempts: record.attempts,
          // Absent rather than spread in (undefined leaves the JSON payload): one shape for every event.
          bounce: FAILURES.has(type) ? bounceOf(outcome, record) : undefined,
          provider: record.provider,
          emailId: link?.emailId,
          tags: link?.tags,
          metadata: link?.metadata,
        },
      });
    }
  }
  return events;
}

/**
 * Why an outcome failed: the record's own class for the outcome that decided it (a provider's
 * verdict included), the rules for an earlier one (a deferral before the bounce).
 */
function bounceOf(outcome: CleanEvent, record: CleanRecord): Bounce {
  if (
    record.bounceType &&
    record.bounceCategory &&
    record.bounceRule &&
    outcome.status === record.status &&
    outcome.response === record.response
  ) {
    return { type: record.bounceType, category: record.bounceCategory, rule: record.bounceRule };
  }
  return classifyBounce({ dsn: outcome.dsn, response: outcome.response, relay: record.relay });
}
