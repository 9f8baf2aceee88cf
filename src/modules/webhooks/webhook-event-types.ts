/** The event types of platform.md "Event types and payload". */
export const WEBHOOK_EVENT_TYPES = [
  'email.queued',
  'email.sent',
  'email.delivered',
  'email.deferred',
  'email.bounced',
  'email.expired',
  'email.rejected',
  'email.complained',
  'email.opened',
  'email.clicked',
  'email.failed',
  'suppression.created',
  'suppression.deleted',
  'domain.verified',
  'domain.failed',
  'quota.warning',
  'quota.exhausted',
  'company.suspended',
  'company.reactivated',
  'deliverability.alert',
  'webhook.test',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** An endpoint's `events`: these types, or every type. */
export const ALL_EVENTS = '*';

/** Mail events are filtered by an endpoint's `domains` (the sender domain); the others are not. */
export const isMailEvent = (type: string): boolean => type.startsWith('email.');

/** Whether an endpoint with these filters receives an event of this type and sender domain. */
export function endpointWants(
  endpoint: { events: readonly string[]; domains: readonly string[] },
  type: string,
  domain: string | null,
): boolean {
  if (!endpoint.events.includes(ALL_EVENTS) && !endpoint.events.includes(type)) return false;
  if (!isMailEvent(type) || endpoint.domains.length === 0) return true;
  return domain !== null && endpoint.domains.includes(domain);
}
