import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** The prefix of a webhook signing secret, as Standard Webhooks libraries expect it. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** The user-agent of every webhook request. */
export const WEBHOOK_USER_AGENT = 'EmailRelay-Webhooks/1';

const SECRET_BYTES = 32;

/** A new signing secret: `whsec_` and the base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/**
 * The headers of one attempt to deliver an event: JSON content, our user-agent and the Standard
 * Webhooks headers, with one `v1,` signature per secret (the new and the old one after a rotation).
 */
export function signedHeaders(
  eventId: string,
  body: string,
  secrets: readonly string[],
  now: Date,
): Record<string, string> {
  if (secrets.length === 0) throw new RangeError('a webhook needs at least one signing secret');
  return {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'webhook-id': eventId,
    // What Webhook.sign puts in the signed content: whole seconds, rounded down.
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(eventId, now, body)).join(' '),
  };
}
