import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { newWebhookSecret, signedHeaders } from './webhook-signing';

describe('webhook signing', () => {
  const body = JSON.stringify({ type: 'message.delivered', data: { messageId: 'msg_1' } });

  it('makes secrets of "whsec_" and the base64 of 32 random bytes', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(secret);
  });

  it('gives the JSON, user-agent and Standard Webhooks headers of an attempt', () => {
    const now = new Date('2026-03-01T12:00:00.999Z');
    const headers = signedHeaders('evt_1', body, [newWebhookSecret()], now);
    expect(Object.keys(headers).sort()).toEqual([
      'content-type',
      'user-agent',
      'webhook-id',
      'webhook-signature',
      'webhook-timestamp',
    ]);
    expect(headers['content-type']).toBe('application/json');
    expect(headers['user-agent']).toBe('EmailRelay-Webhooks/1');
    expect(headers['webhook-id']).toBe('evt_1');
    expect(headers['webhook-timestamp']).toBe(String(Date.parse('2026-03-01T12:00:00Z') / 1000));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
  });

  it('signs so that standardwebhooks verifies the event', () => {
    const secret = newWebhookSecret();
    const headers = signedHeaders('evt_2', body, [secret], new Date());
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('signs with both secrets after a rotation, each of which verifies alone', () => {
    const [newSecret, oldSecret] = [newWebhookSecret(), newWebhookSecret()];
    const headers = signedHeaders('evt_3', body, [newSecret, oldSecret], new Date());
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(newSecret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(oldSecret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('does not verify with another secret or another body', () => {
    const headers = signedHeaders('evt_4', body, [newWebhookSecret()], new Date());
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow(WebhookVerificationError);
    const secret = newWebhookSecret();
    const signed = signedHeaders('evt_4', body, [secret], new Date());
    expect(() => new Webhook(secret).verify(body.replace('msg_1', 'msg_2'), signed)).toThrow(
      WebhookVerificationError,
    );
  });

  it('keeps the event id on every attempt and stamps each with its own time', () => {
    const secret = newWebhookSecret();
    const first = signedHeaders('evt_5', body, [secret], new Date('2026-03-01T12:00:00Z'));
    const retry = signedHeaders('evt_5', body, [secret], new Date('2026-03-01T12:00:05Z'));
    expect(retry['webhook-id']).toBe(first['webhook-id']);
    expect(Number(retry['webhook-timestamp']) - Number(first['webhook-timestamp'])).toBe(5);
    expect(retry['webhook-signature']).not.toBe(first['webhook-signature']);
  });

  it('refuses to sign without a secret', () => {
    expect(() => signedHeaders('evt_6', body, [], new Date())).toThrow(RangeError);
  });
});
