import { Company } from '../src/modules/companies/entities/company.entity';
import { createPaidCompany } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const SHIPPER_KEY = 'log-shipper-key-for-tests-0123456789abcdef';
const INTERNAL_KEY = 'internal-api-key-for-tests-0123456789abcdef';
const BATCHES = 40;
/** Relay decisions that must answer while batches are still pending. */
const MIN_DECISIONS = 5;
const onPostgres = Boolean(process.env.DATABASE_URL);

/** One delivery line of queue `q` (the contract's form), distinct per `n` so no two batches dedupe. */
function deliveryLine(q: string, n: number): string {
  const second = String(n % 60).padStart(2, '0');
  return `Nov 21 18:59:${second} relay1 postfix/smtp[${1000 + n}]: ${q}: to=<r${n}@example.net>, relay=mx.example.net[10.74.103.11]:25, delay=1, delays=0.1/0/0.5/0.4, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as R${n})`;
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
      env: { LOG_SHIPPER_API_KEY: SHIPPER_KEY, INTERNAL_API_KEY: INTERNAL_KEY, LOG_TIMEZONE: 'UTC' },
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
});
