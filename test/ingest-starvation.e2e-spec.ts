import { Company } from '../src/modules/companies/entities/company.entity';
import { DeliveryFacts } from '../src/modules/delivery/delivery-facts';
import type { PostfixDelivery } from '../src/modules/delivery/entities/postfix-delivery.entity';
import { CleanLog } from '../src/modules/log-index/entities/clean-log.entity';
import { createPaidCompany } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const SHIPPER_KEY = 'log-shipper-key-for-tests-0123456789abcdef';
const INTERNAL_KEY = 'internal-api-key-for-tests-0123456789abcdef';
const BATCHES = 40;
/** Relay decisions that must answer while batches are still pending. */
const MIN_DECISIONS = 5;
const onPostgres = Boolean(process.env.DATABASE_URL);
const WEBHOOK_USER = 'provider';
const WEBHOOK_PASSWORD = 'provider-webhook-password-0123456789';

/** One delivery line of queue `q` (the contract's form), distinct per `n` so no two batches dedupe. */
function deliveryLine(q: string, n: number): string {
  const second = String(n % 60).padStart(2, '0');
  return `Nov 21 18:59:${second} relay1 postfix/smtp[${1000 + n}]: ${q}: to=<r${n}@example.net>, relay=mx.example.net[10.74.103.11]:25, delay=1, delays=0.1/0/0.5/0.4, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as R${n})`;
}

/** A deferred attempt for recipient `n` of queue `q`. */
function deferredLine(q: string, n: number): string {
  return `Nov 21 18:58:40 relay1 postfix/smtp[900]: ${q}: to=<r${n}@example.net>, relay=none, delay=5, delays=0.1/0/5/0, dsn=4.4.1, status=deferred (connect to mx.example.net[10.74.103.11]:25: Connection timed out)`;
}

/** The queue's own lines: who sent it (the company), its Message-ID and sender. */
function queueLines(relayUsername: string, q: string): string[] {
  return [
    `Nov 21 18:58:30 relay1 postfix/smtpd[22590]: ${q}: client=host.example[1.2.3.4], sasl_method=PLAIN, sasl_username=${relayUsername}`,
    `Nov 21 18:58:30 relay1 postfix/cleanup[22599]: ${q}: message-id=<STARVE@example.com>`,
    `Nov 21 18:58:31 relay1 postfix/qmgr[15878]: ${q}: from=<news@acme.co.id>, size=920, nrcpt=${BATCHES} (queue active)`,
  ];
}

/**
 * Issue "Nothing one client does stalls the others", item 4: many log batches of one queue wait
 * on that queue's row lock (PostgreSQL). They must not hold the pool while they wait, so the
 * relay decision, which reads through the same pool, still answers at once; and the batches
 * themselves are queued, not refused. On SQLite (one connection, transactions one at a time, and
 * statements from outside wait behind the transactions waiting to start: SqliteTransactionGate)
 * the decisions wait for the batches by design: there only the answers and the count are checked.
 */
describe('Log batches of one queue do not starve the relay decision', () => {
  let t: TestApp;

  const ship = (body: string) =>
    t
      .http()
      .post('/api/v1/callback-raw-log')
      .set('x-api-key', SHIPPER_KEY)
      .set('content-type', 'text/plain')
      .send(body);
  const decide = (relayUsername: string) =>
    t
      .http()
      .post('/api/internal/relay-status')
      .set('x-api-key', INTERNAL_KEY)
      .send({ relayUsername, recipients: ['jo@example.net'] });

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        LOG_SHIPPER_API_KEY: SHIPPER_KEY,
        INTERNAL_API_KEY: INTERNAL_KEY,
        LOG_TIMEZONE: 'UTC',
        MAIL_PROVIDER_WEBHOOK_USER: WEBHOOK_USER,
        MAIL_PROVIDER_WEBHOOK_PASSWORD: WEBHOOK_PASSWORD,
      },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it(`${BATCHES} concurrent batches of one queue all answer 200, and relay-status answers while they wait`, async () => {
    const company = await createPaidCompany(t);
    const q = 'STARVE0001';
    // The queue is known first, so every batch below locks its row.
    await ship(queueLines(company.relayUsername, q).join('\n')).expect(200);

    let batchesPending = BATCHES;
    let decisionsWhilePending = 0;
    const batchStatuses: number[] = [];
    const decisionStatuses: number[] = [];

    const batches = Array.from({ length: BATCHES }, async (_, n) => {
      const res = await ship(deliveryLine(q, n));
      batchStatuses.push(res.status);
      batchesPending -= 1;
    });
    // Decisions go out one after another for as long as batches are pending: each answer counted
    // before the last batch has answered is one the batches did not hold up.
    const decisions = (async () => {
      while (batchesPending > 0) {
        const res = await decide(company.relayUsername);
        decisionStatuses.push(res.status);
        if (batchesPending > 0) decisionsWhilePending += 1;
      }
    })();
    await Promise.all([...batches, decisions]);

    expect(batchStatuses).toEqual(Array(BATCHES).fill(200));
    expect(decisionStatuses.filter((status) => status !== 200)).toEqual([]);
    expect(decisionsWhilePending).toBeGreaterThanOrEqual(onPostgres ? MIN_DECISIONS : 0);
    const used = (await t.dataSource.getRepository(Company).findOneByOrFail({ id: company.id })).used;
    expect(used).toBe(BATCHES);
  });

  it('a line or a provider event for one recipient of a large queue reads and rebuilds that recipient alone', async () => {
    const company = await createPaidCompany(t);
    const q = 'WIDE000001';
    const recipients = 200;
    const deferred = Array.from({ length: recipients }, (_, n) => deferredLine(q, n));
    await ship([...queueLines(company.relayUsername, q), ...deferred].join('\n')).expect(200);
    const logs = t.dataSource.getRepository(CleanLog);
    expect(await logs.countBy({ queueId: q, status: 'deferred' })).toBe(recipients);

    const read: PostfixDelivery[][] = [];
    const facts = t.app.get(DeliveryFacts);
    const deliveriesOf = facts.deliveriesOf.bind(facts);
    const spy = jest.spyOn(facts, 'deliveriesOf').mockImplementation(async (...args) => {
      const lines = await deliveriesOf(...args);
      read.push(lines);
      return lines;
    });
    try {
      const shipped = await ship(deliveryLine(q, 150)).expect(200);
      expect(shipped.body.data).toEqual({ accepted: 1, parsed: 1, skipped: 0, records: 1 });
      expect(read.map((lines) => lines.map((d) => `${d.recipient} ${d.status}`).sort())).toEqual([
        ['r150@example.net deferred', 'r150@example.net sent'],
      ]);

      const event = {
        RecordType: 'Delivery',
        MessageID: 'R150',
        Recipient: 'r150@example.net',
        DeliveredAt: '2026-11-21T19:00:00Z',
      };
      const delivered = await t
        .http()
        .post('/callback/mail-provider')
        .auth(WEBHOOK_USER, WEBHOOK_PASSWORD)
        .send(event)
        .expect(200);
      expect(delivered.body.data).toEqual({ accepted: 1, duplicates: 0, skipped: 0 });
      expect(read).toHaveLength(2);
      expect(read[1].map((d) => d.recipient)).toEqual(['r150@example.net', 'r150@example.net']);
    } finally {
      spy.mockRestore();
    }
    const record = await logs.findOneByOrFail({ queueId: q, to: 'r150@example.net' });
    expect(record.status).toBe('delivered');
    expect(record.events.map((e) => e.status)).toEqual(['deferred', 'sent', 'delivered']);
    expect(await logs.countBy({ queueId: q, status: 'deferred' })).toBe(recipients - 1);
    // Each record counted once: when it was first deferred, not again when it was sent.
    expect((await t.dataSource.getRepository(Company).findOneByOrFail({ id: company.id })).used).toBe(
      recipients,
    );
  });
});
