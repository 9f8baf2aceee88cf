import { isMailEvent, WebhookEventType } from './webhook-event-types';

/** The `data` of a sample event (`POST /api/v1/webhooks/:uuid/test`): the shape of a real one, marked `test`. */
export function sampleEventData(type: WebhookEventType, companyUuid: string): Record<string, unknown> {
  const base = { companyUuid, test: true };
  if (isMailEvent(type)) {
    const status = type.slice('email.'.length);
    return {
      ...base,
      recordId: '0'.repeat(64),
      messageId: '<sample@relay.example>',
      domain: 'example.com',
      from: 'sender@example.com',
      to: 'recipient@example.net',
      status,
      dsn: type === 'email.bounced' ? '5.1.1' : null,
      response: type === 'email.bounced' ? '550 5.1.1 <recipient@example.net>: no such user' : null,
      relay: 'mx.example.net[192.0.2.7]:25',
      attempts: 1,
      provider: 'other',
      ...(type === 'email.bounced' && {
        bounce: { type: 'hard', category: 'unknown-recipient', rule: 'rfc3463-5.1.1' },
      }),
      seq: 1,
    };
  }
  if (type.startsWith('suppression.'))
    return { ...base, email: 'recipient@example.net', reason: 'manual', source: 'user' };
  if (type.startsWith('domain.'))
    return { ...base, domain: 'example.com', status: type === 'domain.verified' ? 'verified' : 'failed' };
  if (type.startsWith('quota.'))
    return { ...base, quota: 1000, used: type === 'quota.exhausted' ? 1000 : 800 };
  if (type === 'deliverability.alert')
    return {
      ...base,
      uuid: '00000000-0000-4000-8000-000000000000',
      provider: 'gmail',
      kind: 'blocked',
      level: 'critical',
      value: 0.1,
      threshold: 0.05,
      openedAt: new Date(0).toISOString(),
      resolvedAt: null,
      sample: { response: '550 5.7.26 Unauthenticated email is not accepted', rule: 'gmail-auth-5.7.26' },
    };
  if (type.startsWith('company.'))
    return { ...base, status: type === 'company.suspended' ? 'suspended' : 'active' };
  return base;
}
