import fc from 'fast-check';
import type { CleanRecord } from '../log-index/clean-record';
import {
  buildQueuedRecord,
  buildRejectRecord,
  DeliveryFact,
  ProviderFact,
  QueueFacts,
  recordChanged,
  recordIdOf,
  rejectRecordIdOf,
} from './clean-record-builder';

const T0 = Date.UTC(2026, 10, 2, 12, 0, 0);
const at = (seconds: number) => new Date(T0 + seconds * 1000);

const queue = (overrides: Partial<QueueFacts> = {}): QueueFacts => ({
  host: 'relay1',
  queueId: 'AA10A2839B',
  clientIp: '1.2.3.4',
  saslUsername: 'r-7f3k2q9d',
  messageId: 'FB62@example.com',
  sender: 'News@Acme.Example',
  size: 920,
  expiredAt: null,
  firstSeenAt: at(0),
  ...overrides,
});

const line = (overrides: Partial<DeliveryFact> = {}): DeliveryFact => ({
  recipient: 'jo@example.net',
  origTo: null,
  at: at(10),
  status: 'sent',
  dsn: '2.0.0',
  relay: 'mx.example.net[10.0.0.1]:25',
  delay: 1.5,
  response: '250 2.0.0 Ok: queued as F12DF84004',
  remoteQueueId: 'F12DF84004',
  ...overrides,
});

const providerEvent = (overrides: Partial<ProviderFact> = {}): ProviderFact => ({
  id: 1,
  type: 'delivered',
  at: at(20),
  bounceKind: null,
  dsn: null,
  reason: null,
  ...overrides,
});

const company = { id: 7, uuid: '5f0c6f1e-8d3a-4a57-9a43-1b2c3d4e5f60' };

describe('buildQueuedRecord', () => {
  it('builds the record of a sent recipient from its queue and its line', () => {
    expect(buildQueuedRecord(queue(), [line({ origTo: 'all@acme.example' })], [], company)).toEqual({
      id: recordIdOf('relay1', 'AA10A2839B', 'jo@example.net'),
      companyId: 7,
      companyUuid: company.uuid,
      host: 'relay1',
      queueId: 'AA10A2839B',
      messageId: 'FB62@example.com',
      from: 'News@Acme.Example',
      senderDomain: 'acme.example',
      to: 'jo@example.net',
      origTo: 'all@acme.example',
      status: 'sent',
      dsn: '2.0.0',
      response: '250 2.0.0 Ok: queued as F12DF84004',
      relay: 'mx.example.net[10.0.0.1]:25',
      delay: 1.5,
      size: 920,
      clientIp: '1.2.3.4',
      saslUsername: 'r-7f3k2q9d',
      remoteQueueId: 'F12DF84004',
      attempts: 1,
      opened: false,
      clicked: false,
      firstSeenAt: at(0),
      lastEventAt: at(10),
      events: [
        {
          at: at(10).toISOString(),
          status: 'sent',
          dsn: '2.0.0',
          response: '250 2.0.0 Ok: queued as F12DF84004',
        },
      ],
      emailId: null,
      provider: 'other',
      bounceType: null,
      bounceCategory: null,
      bounceRule: null,
    });
  });

  it('is queued without lines, of no company and the null sender when none is known', () => {
    const record = buildQueuedRecord(queue({ sender: null }), [], [], null);
    expect(record).toMatchObject({
      status: 'queued',
      to: '',
      from: '',
      senderDomain: null,
      companyId: null,
      companyUuid: null,
      attempts: 0,
      dsn: null,
      relay: null,
      events: [],
      lastEventAt: at(0),
    });
  });

  it('stays deferred until a final line, taking the last deferral’s reply and counting the attempts', () => {
    const deferrals = [
      line({ status: 'deferred', at: at(10), dsn: '4.4.1', response: 'timeout', relay: null }),
      line({ status: 'deferred', at: at(70), dsn: '4.2.0', response: 'greylisted', relay: 'mx2' }),
    ];
    expect(buildQueuedRecord(queue(), deferrals, [], company)).toMatchObject({
      status: 'deferred',
      dsn: '4.2.0',
      response: 'greylisted',
      relay: 'mx2',
      attempts: 2,
      lastEventAt: at(70),
    });
    const final = buildQueuedRecord(queue(), [...deferrals, line({ at: at(130) })], [], company);
    expect(final).toMatchObject({ status: 'sent', dsn: '2.0.0', attempts: 3 });
    expect(final.events.map((e) => e.status)).toEqual(['deferred', 'deferred', 'sent']);
  });

  it('expires a message the queue gave up on, unless a final line came first', () => {
    const deferred = [line({ status: 'deferred', dsn: '4.4.1', response: 'timeout' })];
    const expired = buildQueuedRecord(queue({ expiredAt: at(500) }), deferred, [], company);
    expect(expired).toMatchObject({ status: 'expired', dsn: '4.4.1', lastEventAt: at(500) });
    expect(expired.events[expired.events.length - 1]).toEqual({
      at: at(500).toISOString(),
      status: 'expired',
      dsn: null,
      response: null,
    });
    const bounced = [line({ status: 'bounced', dsn: '5.1.1', response: '550 no such user' })];
    expect(buildQueuedRecord(queue({ expiredAt: at(500) }), bounced, [], company).status).toBe('bounced');
  });

  it('applies provider events once Postfix handed the message over: delivered, opened, clicked, bounced', () => {
    const record = buildQueuedRecord(
      queue(),
      [line()],
      [
        providerEvent({ id: 1, type: 'delivered', at: at(20) }),
        providerEvent({ id: 2, type: 'opened', at: at(30) }),
        providerEvent({ id: 3, type: 'clicked', at: at(40) }),
      ],
      company,
    );
    expect(record).toMatchObject({ status: 'delivered', opened: true, clicked: true, lastEventAt: at(40) });
    expect(record.events.map((e) => e.status)).toEqual(['sent', 'delivered', 'opened', 'clicked']);

    const bounced = buildQueuedRecord(
      queue(),
      [line()],
      [providerEvent({ type: 'bounced', dsn: '5.1.1', reason: '550 5.1.1 user unknown' })],
      company,
    );
    expect(bounced).toMatchObject({ status: 'bounced', dsn: '5.1.1', response: '550 5.1.1 user unknown' });
  });

  it('keeps a complaint against a later bounce, and ignores provider outcomes before the handover', () => {
    const complained = buildQueuedRecord(
      queue(),
      [line()],
      [
        providerEvent({ id: 1, type: 'complained', at: at(20) }),
        providerEvent({ id: 2, type: 'bounced', at: at(30), dsn: '5.0.0' }),
      ],
      company,
    );
    expect(complained).toMatchObject({ status: 'complained', dsn: '2.0.0' });
    const deferred = buildQueuedRecord(
      queue(),
      [line({ status: 'deferred', dsn: '4.4.1' })],
      [providerEvent({ type: 'delivered' })],
      company,
    );
    expect(deferred.status).toBe('deferred');
    expect(deferred.events.map((e) => e.status)).toEqual(['deferred', 'delivered']);
  });

  it('does not count a recipient refused while the client was sending as an attempt', () => {
    const record = buildQueuedRecord(queue(), [line({ status: 'rejected', dsn: '5.7.1' })], [], company);
    expect(record).toMatchObject({ status: 'rejected', attempts: 0 });
  });
});

describe('buildRejectRecord', () => {
  it('builds one record of a NOQUEUE reject, without a queue', () => {
    const reject = {
      ...line({ status: 'rejected', dsn: '5.7.1', response: 'Relay access denied', relay: null }),
      sender: 'a@acme.example',
      clientIp: '1.2.3.4',
    };
    expect(buildRejectRecord('relay1', reject, company)).toEqual({
      id: rejectRecordIdOf('relay1', at(10), 'a@acme.example', 'jo@example.net'),
      companyId: 7,
      companyUuid: company.uuid,
      host: 'relay1',
      queueId: null,
      messageId: null,
      from: 'a@acme.example',
      senderDomain: 'acme.example',
      to: 'jo@example.net',
      origTo: null,
      status: 'rejected',
      dsn: '5.7.1',
      response: 'Relay access denied',
      relay: null,
      delay: null,
      size: null,
      clientIp: '1.2.3.4',
      saslUsername: null,
      remoteQueueId: null,
      attempts: 0,
      opened: false,
      clicked: false,
      firstSeenAt: at(10),
      lastEventAt: at(10),
      events: [
        { at: at(10).toISOString(), status: 'rejected', dsn: '5.7.1', response: 'Relay access denied' },
      ],
      emailId: null,
      // Our own relay's refusal: no bounce class (the next hop never saw it).
      provider: 'other',
      bounceType: null,
      bounceCategory: null,
      bounceRule: null,
    });
  });
});

describe('recordChanged', () => {
  const record = (): CleanRecord =>
    buildQueuedRecord(queue(), [line()], [providerEvent({ type: 'opened' })], company);

  it('is a change when there was no record', () => {
    expect(recordChanged(undefined, record())).toBe(true);
  });

  it('is no change for the same values, whatever the order of the keys or the form of the dates', () => {
    const built = record();
    const reversed = Object.fromEntries(Object.entries(built).reverse()) as unknown as CleanRecord;
    expect(recordChanged(reversed, built)).toBe(false);
    const events = built.events.map((e) => ({
      response: e.response,
      dsn: e.dsn,
      status: e.status,
      at: e.at,
    }));
    expect(recordChanged({ ...built, events }, built)).toBe(false);
    const stored = { ...built, firstSeenAt: built.firstSeenAt.toISOString() as unknown as Date };
    expect(recordChanged(stored, built)).toBe(false);
  });

  it('is a change when any one field differs', () => {
    const built = record();
    const other: { [K in keyof CleanRecord]: CleanRecord[K] } = {
      id: 'f'.repeat(64),
      companyId: 8,
      companyUuid: null,
      host: 'relay2',
      queueId: 'BB20B3940C',
      messageId: null,
      from: 'other@acme.example',
      senderDomain: 'other.example',
      to: 'ann@example.org',
      origTo: 'all@acme.example',
      status: 'delivered',
      dsn: '2.0.1',
      response: '250 Ok',
      relay: null,
      delay: 2,
      size: 921,
      clientIp: null,
      saslUsername: null,
      remoteQueueId: null,
      attempts: 2,
      opened: false,
      clicked: true,
      firstSeenAt: at(-1),
      lastEventAt: at(99),
      events: [...built.events, { at: at(99).toISOString(), status: 'clicked', dsn: null, response: null }],
      emailId: '0b6f1c5e-4a7d-4c1e-9a3b-2f7d0c9e8a11',
      provider: 'gmail',
      bounceType: 'hard',
      bounceCategory: 'unknown-recipient',
      bounceRule: 'rfc3463-5.1.1',
    };
    for (const field of Object.keys(other) as Array<keyof CleanRecord>) {
      expect([field, recordChanged(built, { ...built, [field]: other[field] })]).toEqual([field, true]);
    }
    const event = { ...built.events[0], dsn: '2.0.1' };
    expect(recordChanged(built, { ...built, events: [event, ...built.events.slice(1)] })).toBe(true);
  });
});

describe('the same facts in any order give the same record', () => {
  // Few distinct times, so that lines and events often share one.
  const time = fc.integer({ min: 0, max: 6 }).map(at);
  const nullable = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });
  const deliveryFact = fc.record<DeliveryFact>({
    recipient: fc.constant('jo@example.net'),
    origTo: nullable(fc.constantFrom('all@acme.example', 'team@acme.example')),
    at: time,
    status: fc.constantFrom('sent', 'deferred', 'bounced', 'expired', 'rejected'),
    dsn: nullable(fc.constantFrom('2.0.0', '4.4.1', '5.1.1')),
    relay: nullable(fc.constantFrom('mx1', 'mx2')),
    delay: nullable(fc.constantFrom(0.5, 3)),
    response: nullable(fc.constantFrom('250 Ok', '450 try later', '550 no such user')),
    remoteQueueId: nullable(fc.constantFrom('R1', 'R2')),
  });
  const providerFact = fc.record<ProviderFact>({
    id: fc.nat(),
    type: fc.constantFrom('delivered', 'opened', 'clicked', 'bounced', 'complained'),
    at: time,
    bounceKind: nullable(fc.constantFrom('hard', 'soft')),
    dsn: nullable(fc.constantFrom('5.1.1', '5.7.1')),
    reason: nullable(fc.constantFrom('user unknown', 'blocked')),
  });
  const facts = fc.record({
    queue: fc.record({ expiredAt: nullable(time), firstSeenAt: time }).map((q) => queue(q)),
    deliveries: fc.array(deliveryFact, { maxLength: 5 }),
    // Provider events are rows: their ids are unique.
    events: fc.uniqueArray(providerFact, { maxLength: 5, selector: (e) => e.id }),
  });
  const reordered = facts.chain((f) =>
    fc.record({
      facts: fc.constant(f),
      deliveries: fc.shuffledSubarray(f.deliveries, { minLength: f.deliveries.length }),
      events: fc.shuffledSubarray(f.events, { minLength: f.events.length }),
    }),
  );

  it('holds for queued records', () => {
    fc.assert(
      fc.property(reordered, ({ facts: { queue: q, deliveries, events }, ...again }) => {
        const one = buildQueuedRecord(q, deliveries, events, company);
        const other = buildQueuedRecord(q, again.deliveries, again.events, company);
        expect(other).toEqual(one);
        expect(recordChanged(one, other)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});
