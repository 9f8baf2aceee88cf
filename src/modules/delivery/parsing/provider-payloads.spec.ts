import { detectProvider, normaliseEvents } from './provider-payloads';

/** Shapes as the providers document their webhooks (fields trimmed to what matters here). */
const postmarkBounce = {
  RecordType: 'Bounce',
  ID: 4323372036,
  Type: 'HardBounce',
  TypeCode: 1,
  MessageID: '883953f4-6105-42a2-a16a-77a8eac79483',
  Description: 'The server was unable to deliver your message (ex: unknown user, mailbox not found).',
  Details: 'smtp;550 5.1.1 The email account that you tried to reach does not exist.',
  Email: 'Zaphod@Example.com',
  BouncedAt: '2026-11-21T16:31:40Z',
  Inactive: true,
};
const postmarkDelivery = {
  RecordType: 'Delivery',
  MessageID: '883953f4-6105-42a2-a16a-77a8eac79483',
  Recipient: 'john@example.com',
  DeliveredAt: '2026-11-21T16:31:41Z',
  Details: 'Test delivery webhook details',
};
const sendgridBatch = [
  {
    email: 'example@test.com',
    timestamp: 1763742700,
    'smtp-id': '<14c5d75ce93.dfd.64b469@ismtpd-555>',
    event: 'delivered',
    sg_event_id: 'sg_event_id_1',
    sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0',
    response: '250 OK',
  },
  {
    email: 'bounced@test.com',
    timestamp: 1763742701,
    event: 'bounce',
    type: 'bounce',
    status: '5.1.1',
    reason: '550 5.1.1 unknown user',
    sg_event_id: 'sg_event_id_2',
    sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0',
  },
  {
    email: 'blocked@test.com',
    timestamp: 1763742702,
    event: 'bounce',
    type: 'blocked',
    sg_event_id: 'sg_event_id_3',
  },
  { email: 'spam@test.com', timestamp: 1763742703, event: 'spamreport', sg_event_id: 'sg_event_id_4' },
  { email: 'gone@test.com', timestamp: 1763742704, event: 'group_unsubscribe', sg_event_id: 'sg_event_id_5' },
  { email: 'x@test.com', timestamp: 1763742705, event: 'processed', sg_event_id: 'sg_event_id_6' },
];
const sparkpostBatch = [
  {
    msys: {
      message_event: {
        type: 'bounce',
        bounce_class: '10',
        event_id: '92356927693813856',
        message_id: '000443ee14578172be22',
        rcpt_to: 'recipient@example.com',
        raw_reason: '550 5.1.1 <recipient@example.com>: Recipient address rejected: User unknown',
        timestamp: '1763742706',
      },
    },
  },
  {
    msys: {
      message_event: {
        type: 'bounce',
        bounce_class: '52',
        event_id: 'e2',
        rcpt_to: 'b@example.com',
        timestamp: '1763742707',
      },
    },
  },
  {
    msys: {
      track_event: { type: 'open', event_id: 'e3', rcpt_to: 'o@example.com', timestamp: '1763742708' },
    },
  },
  {
    msys: {
      unsubscribe_event: {
        type: 'list_unsubscribe',
        event_id: 'e4',
        rcpt_to: 'u@example.com',
        timestamp: '1763742709',
      },
    },
  },
  { msys: {} },
];

describe('detectProvider', () => {
  it('tells the three shapes apart and refuses anything else', () => {
    expect(detectProvider(postmarkBounce)).toBe('postmark');
    expect(detectProvider(sendgridBatch)).toBe('sendgrid');
    expect(detectProvider(sparkpostBatch)).toBe('sparkpost');
    for (const body of [null, 'x', [], {}, [{ foo: 1 }], [{ event: 'open' }, { msys: {} }]])
      expect(detectProvider(body)).toBeNull();
  });
});

describe('normaliseEvents', () => {
  it('Postmark: a hard bounce with its own id, a delivery with a hash id', () => {
    const [bounce] = normaliseEvents(postmarkBounce).events;
    expect(bounce).toEqual({
      provider: 'postmark',
      providerEventId: 'postmark:bounce:4323372036',
      type: 'bounced',
      recipient: 'zaphod@example.com',
      providerMessageId: '883953f4-6105-42a2-a16a-77a8eac79483',
      at: new Date('2026-11-21T16:31:40Z'),
      bounceKind: 'hard',
      reason: postmarkBounce.Description,
      raw: postmarkBounce,
    });
    const [delivery] = normaliseEvents(postmarkDelivery).events;
    expect(delivery).toMatchObject({
      type: 'delivered',
      recipient: 'john@example.com',
      providerEventId: expect.stringMatching(/^postmark:sha256:[0-9a-f]{64}$/),
    });
    // The same raw event twice gives the same id (dedupe), whatever the key order.
    const reordered = Object.fromEntries(Object.entries(postmarkDelivery).reverse());
    expect(normaliseEvents(reordered).events[0].providerEventId).toBe(delivery.providerEventId);
  });

  it('Postmark: soft bounces, spam notifications and subscription changes', () => {
    expect(normaliseEvents({ ...postmarkBounce, Type: 'Transient' }).events[0]).toMatchObject({
      type: 'bounced',
      bounceKind: 'soft',
    });
    expect(normaliseEvents({ ...postmarkBounce, Type: 'SpamNotification' }).events[0]).toMatchObject({
      type: 'complained',
    });
    expect(
      normaliseEvents({
        RecordType: 'SubscriptionChange',
        Recipient: 'a@b.c',
        ChangedAt: '2026-11-21T16:31:40Z',
        SuppressSending: true,
      }).events[0],
    ).toMatchObject({
      type: 'unsubscribed',
    });
  });

  it('SendGrid: Message-ID from smtp-id, provider id up to its first dot, bounce vs blocked, one unknown event reported', () => {
    const { events, bad } = normaliseEvents(sendgridBatch);
    expect(events.map((e) => [e.type, e.recipient, e.bounceKind])).toEqual([
      ['delivered', 'example@test.com', undefined],
      ['bounced', 'bounced@test.com', 'hard'],
      ['bounced', 'blocked@test.com', 'soft'],
      ['complained', 'spam@test.com', undefined],
      ['unsubscribed', 'gone@test.com', undefined],
    ]);
    expect(events[0]).toMatchObject({
      providerEventId: 'sendgrid:sg_event_id_1',
      messageId: '14c5d75ce93.dfd.64b469@ismtpd-555',
      providerMessageId: '14c5d75ce93',
      at: new Date(1763742700 * 1000),
    });
    expect(events[1]).toMatchObject({ dsn: '5.1.1', reason: '550 5.1.1 unknown user' });
    expect(bad).toEqual([{ index: 5, reason: 'SendGrid event processed is not one we map' }]);
  });

  it('SparkPost: bounce classes, tracking and unsubscribe events; the ping is no event and not bad', () => {
    const { events, bad } = normaliseEvents(sparkpostBatch);
    expect(events.map((e) => [e.type, e.bounceKind ?? null, e.providerEventId])).toEqual([
      ['bounced', 'hard', 'sparkpost:92356927693813856'],
      ['bounced', 'block', 'sparkpost:e2'],
      ['opened', null, 'sparkpost:e3'],
      ['unsubscribed', null, 'sparkpost:e4'],
    ]);
    expect(events[0]).toMatchObject({
      providerMessageId: '000443ee14578172be22',
      recipient: 'recipient@example.com',
    });
    expect(bad).toEqual([]);
  });

  it('reports an event without a recipient or a readable time, and keeps the others', () => {
    const { events, bad } = normaliseEvents([
      { event: 'open', timestamp: 1763742700, sg_event_id: 'a' },
      { event: 'open', email: 'ok@test.com', timestamp: 'soon', sg_event_id: 'b' },
      { event: 'open', email: 'ok@test.com', timestamp: 1763742700, sg_event_id: 'c' },
    ]);
    expect(events.map((e) => e.providerEventId)).toEqual(['sendgrid:c']);
    expect(bad).toEqual([
      { index: 0, reason: 'No recipient address' },
      { index: 1, reason: 'No readable event time' },
    ]);
  });
});
