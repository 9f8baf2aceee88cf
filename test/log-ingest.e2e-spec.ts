import { SchedulerRegistry } from '@nestjs/schedule';
import { gzipSync } from 'node:zlib';
import { IsNull, Repository } from 'typeorm';
import { DatabaseRuntime } from '../src/database/database-runtime';
import { Company } from '../src/modules/companies/entities/company.entity';
import { DeliveryFacts } from '../src/modules/delivery/delivery-facts';
import { LogBatch } from '../src/modules/delivery/entities/log-batch.entity';
import { LogBatchesService } from '../src/modules/delivery/log-batches.service';
import { CleanLog } from '../src/modules/log-index/entities/clean-log.entity';
import { SuppressionEntry } from '../src/modules/suppression/entities/suppression-entry.entity';
import { bearer, countRows, createActiveUser, createPaidCompany, expectFailure } from './support/factories';
import { fakeDateAt } from './support/clock';
import { createTestApp, TestApp } from './support/test-app';

const KEY = 'log-shipper-key-for-tests-0123456789abcdef';

/** The contract's lines (integrations.md "Log shipper"), one message of `relayUsername` and a stranger's. */
function contractLines(relayUsername: string, q = 'AA10A2839B', other = 'BB20B3940C'): string[] {
  return [
    `Nov 21 18:58:30 relay1 postfix/smtpd[22590]: ${q}: client=host.example[1.2.3.4], sasl_method=PLAIN, sasl_username=${relayUsername}`,
    `Nov 21 18:58:30 relay1 postfix/cleanup[22599]: ${q}: message-id=<FB62@example.com>`,
    `Nov 21 18:58:31 relay1 postfix/qmgr[15878]: ${q}: from=<news@acme.co.id>, size=920, nrcpt=2 (queue active)`,
    `Nov 21 18:58:35 relay1 postfix/smtp[301]: ${q}: to=<jo@example.net>, orig_to=<all@acme.co.id>, relay=mx.example.net[10.74.103.11]:25, delay=11, delays=5.4/0.06/5.1/0.03, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as F12DF84004)`,
    `Nov 21 18:58:36 relay1 postfix/smtp[302]: ${q}: to=<x@gmail.com>, relay=gmail-smtp-in.l.google.com[142.250.4.27]:25, delay=1.9, delays=0.1/0/0.5/1.3, dsn=5.1.1, status=bounced (host gmail-smtp-in.l.google.com[142.250.4.27] said: 550-5.1.1 The email account that you tried to reach does not exist (in reply to RCPT TO command))`,
    `Nov 21 18:58:37 relay1 postfix/smtp[303]: ${other}: to=<a@b.id>, relay=mx.b.id[1.2.3.5]:25, delay=2.3, delays=0.1/0/1/1.2, dsn=4.2.0, status=deferred (host mx.b.id[1.2.3.5] said: 450 4.2.0 Greylisted)`,
    `Nov 21 18:58:38 relay1 postfix/qmgr[15878]: ${q}: removed`,
    `Nov 21 18:58:39 relay1 postfix/smtpd[22590]: NOQUEUE: reject: RCPT from h[1.2.3.4]: 554 5.7.1 <x@${q}.z>: Relay access denied; from=<a@acme.co.id> to=<x@${q}.z> proto=ESMTP helo=<h>`,
    'Nov 21 18:58:40 relay1 kernel: [12345.678] eth0: link up',
    'not a syslog line at all',
  ];
}

describe('Log ingest (POST /api/v1/callback-raw-log)', () => {
  let t: TestApp;
  let logs: Repository<CleanLog>;
  let companies: Repository<Company>;
  let suppression: Repository<SuppressionEntry>;

  const post = (body: string | Buffer, type = 'text/plain', headers: Record<string, string> = {}) =>
    t
      .http()
      .post('/api/v1/callback-raw-log')
      .set('x-api-key', KEY)
      .set('content-type', type)
      .set(headers)
      .send(body);

  const paidCompany = () => createPaidCompany(t);

  /** The newest text batch left unapplied, which must be kept whole with the error that stopped it. */
  async function keptUnapplied(body: string): Promise<LogBatch> {
    const [stored] = await t.dataSource.getRepository(LogBatch).find({
      where: { contentType: 'text', outcome: IsNull() },
      order: { id: 'DESC' },
      take: 1,
    });
    expect(stored).toMatchObject({
      raw: body,
      outcome: null,
      attempts: 1,
      lastError: 'Error: database hiccup',
    });
    return stored;
  }

  /**
   * Runs the retry job once the batches stored now are no longer in flight (31 s later): it must
   * apply `stored`, alone, and drop its body. Answers the batch's row.
   */
  async function appliedByRetryJob(stored: LogBatch): Promise<LogBatch> {
    const clock = fakeDateAt(Date.now());
    try {
      clock.set(Date.now() + 31_000);
      expect(await t.app.get(LogBatchesService).retryUnapplied()).toBe(1);
    } finally {
      jest.useRealTimers();
    }
    const row = await t.dataSource.getRepository(LogBatch).findOneByOrFail({ id: stored.id });
    expect(row).toMatchObject({ raw: '', outcome: 'applied', attempts: 2, lastError: null });
    return row;
  }

  const used = async (company: Company) => (await companies.findOneByOrFail({ id: company.id })).used;

  beforeAll(async () => {
    t = await createTestApp({ env: { LOG_SHIPPER_API_KEY: KEY, LOG_TIMEZONE: 'UTC' } });
    // The scheduler would run retry-callbacks on the minute, and a batch that failed is due at once:
    // it could apply one between a test's 503 and its look at what was kept. These tests run it themselves.
    for (const cron of t.app.get(SchedulerRegistry).getCronJobs().values()) await cron.stop();
    logs = t.dataSource.getRepository(CleanLog);
    companies = t.dataSource.getRepository(Company);
    suppression = t.dataSource.getRepository(SuppressionEntry);
  });
  afterAll(async () => {
    await t.close();
  });

  it('builds the clean records of the contract lines, counts quota and suppresses the hard bounce', async () => {
    const company = await paidCompany();
    const res = await post(contractLines(company.relayUsername).join('\n')).expect(200);
    expect(res.body).toMatchObject({ status: 'success', code: 200 });
    expect(res.body.data).toEqual({ accepted: 10, parsed: 8, skipped: 2, records: 4 });

    const sent = await logs.findOneByOrFail({ queueId: 'AA10A2839B', to: 'jo@example.net' });
    expect(sent).toMatchObject({
      companyId: company.id,
      companyUuid: company.uuid,
      host: 'relay1',
      messageId: 'FB62@example.com',
      from: 'news@acme.co.id',
      senderDomain: 'acme.co.id',
      origTo: 'all@acme.co.id',
      status: 'sent',
      dsn: '2.0.0',
      relay: 'mx.example.net[10.74.103.11]:25',
      size: 920,
      clientIp: '1.2.3.4',
      saslUsername: company.relayUsername,
      remoteQueueId: 'F12DF84004',
      attempts: 1,
    });
    expect(sent.id).toMatch(/^[0-9a-f]{64}$/);
    expect(Number(sent.delay)).toBe(11);
    expect(sent.events).toEqual([
      expect.objectContaining({
        status: 'sent',
        dsn: '2.0.0',
        response: '250 2.0.0 Ok: queued as F12DF84004',
      }),
    ]);

    const bounced = await logs.findOneByOrFail({ queueId: 'AA10A2839B', to: 'x@gmail.com' });
    expect(bounced).toMatchObject({ companyId: company.id, status: 'bounced', dsn: '5.1.1' });
    const deferred = await logs.findOneByOrFail({ queueId: 'BB20B3940C' });
    expect(deferred).toMatchObject({ companyId: null, status: 'deferred', to: 'a@b.id' });
    const rejected = await logs.findOneByOrFail({ to: 'x@aa10a2839b.z' });
    expect(rejected).toMatchObject({
      queueId: null,
      status: 'rejected',
      from: 'a@acme.co.id',
      clientIp: '1.2.3.4',
    });
    expect(rejected.response).toContain('554 5.7.1');

    // The sent and the bounced recipient count; the stranger's deferral has no company.
    expect(await used(company)).toBe(2);
    const entry = await suppression.findOneByOrFail({ companyId: company.id, email: 'x@gmail.com' });
    expect(entry).toMatchObject({ reason: 'hard_bounce', source: 'log' });
  });

  it('the same batch again changes nothing and counts nothing (records: 0)', async () => {
    const company = await paidCompany();
    const body = contractLines(company.relayUsername, 'CC11C2839C', 'DD22D3940D').join('\n');
    expect((await post(body).expect(200)).body.data.records).toBe(4);
    const rows = await countRows(t, 'clean_logs');
    const again = await post(body).expect(200);
    expect(again.body.data).toEqual({ accepted: 10, parsed: 8, skipped: 2, records: 0 });
    expect(await countRows(t, 'clean_logs')).toBe(rows);
    expect(await used(company)).toBe(2);
  });

  it('an applied batch keeps its key, not its body; one that cannot be applied is kept whole (503) until a redelivery or the retry job applies it', async () => {
    const company = await paidCompany();
    const body = contractLines(company.relayUsername, 'AB12C2839A', 'AB12C3940B').join('\n');
    const facts = t.app.get(DeliveryFacts);
    const failing = jest.spyOn(facts, 'mergeQueues').mockRejectedValueOnce(new Error('database hiccup'));
    try {
      const refused = await post(body).expect(503);
      expectFailure(refused.body, 503, 'Log batch stored but not applied yet; retry later');
    } finally {
      failing.mockRestore();
    }
    const batches = t.dataSource.getRepository(LogBatch);
    const stored = await keptUnapplied(body);
    expect(await logs.countBy({ queueId: 'AB12C2839A' })).toBe(0);
    expect(await used(company)).toBe(0);

    // The retry job applies it from the stored body, and drops the body.
    expect((await appliedByRetryJob(stored)).records).toBe(4);
    expect(await logs.countBy({ queueId: 'AB12C2839A' })).toBe(2);
    expect(await used(company)).toBe(2);
    // The shipper's own retry is then a copy.
    expect((await post(body).expect(200)).body.data.records).toBe(0);

    // Applied at once: the row holds the key and the outcome, without the body.
    const fresh = contractLines(company.relayUsername, 'AB12C4839C', 'AB12C5940D').join('\n');
    expect((await post(fresh).expect(200)).body.data.records).toBe(4);
    const [applied] = await batches.find({ where: { contentType: 'text' }, order: { id: 'DESC' }, take: 1 });
    expect(applied).toMatchObject({ raw: '', outcome: 'applied', attempts: 1, records: 4, lastError: null });
    expect(await batches.countBy({ outcome: IsNull() })).toBe(0);
  });

  describe('a batch larger than one unit of bulk work (DatabaseRuntime.bulkUnit: here 4 lines)', () => {
    /** Three messages' lines (and three strangers'), of queues of their own in each test. */
    let queues: string[] = [];
    const largeBatch = (company: Company) =>
      [0, 2, 4].flatMap((n) => contractLines(company.relayUsername, queues[n], queues[n + 1])).join('\n');
    let test = 0;
    const mergeCalls = () => jest.spyOn(t.app.get(DeliveryFacts), 'mergeQueues');

    beforeEach(() => {
      test += 1;
      queues = [...'ABCDEF'].map((letter) => `AC${test}0A2839${letter}`);
      jest.replaceProperty(t.app.get(DatabaseRuntime), 'bulkUnit', 4);
    });
    afterEach(() => {
      jest.restoreAllMocks();
    });

    it('is applied a unit per transaction, to the same records as in one', async () => {
      const company = await paidCompany();
      const merges = mergeCalls();
      const answer = await post(largeBatch(company)).expect(200);
      // 24 Postfix lines of the clean log's forms, a queue's lines never split: a message's six
      // lines a unit each, a stranger's deferral each, the last with the three rejects.
      expect(merges).toHaveBeenCalledTimes(6);
      const queuesMerged = merges.mock.calls.flatMap(([, facts]) => facts.map((f) => f.queueId));
      expect(queuesMerged.sort()).toEqual([...queues].sort());
      expect(answer.body.data).toEqual({ accepted: 30, parsed: 24, skipped: 6, records: expect.any(Number) });
      for (const q of [queues[0], queues[2], queues[4]]) expect(await logs.countBy({ queueId: q })).toBe(2);
      expect(await used(company)).toBe(6);
      const [row] = await t.dataSource
        .getRepository(LogBatch)
        .find({ where: { contentType: 'text' }, order: { id: 'DESC' }, take: 1 });
      expect(row).toMatchObject({ raw: '', outcome: 'applied', attempts: 1, lastError: null });
      expect(row.records).toBe(answer.body.data.records);
      // A copy is a duplicate, applied by nobody.
      expect((await post(largeBatch(company)).expect(200)).body.data.records).toBe(0);
      expect(await used(company)).toBe(6);
    });

    it('a failure half-way keeps it whole and unapplied (503); the retry job applies it again, counting each message once', async () => {
      const company = await paidCompany();
      const facts = t.app.get(DeliveryFacts);
      const merge = facts.mergeQueues.bind(facts);
      let calls = 0;
      jest
        .spyOn(facts, 'mergeQueues')
        .mockImplementation((em, batch) =>
          ++calls === 4 ? Promise.reject(new Error('database hiccup')) : merge(em, batch),
        );
      const body = largeBatch(company);
      expectFailure(
        (await post(body).expect(503)).body,
        503,
        'Log batch stored but not applied yet; retry later',
      );
      const batches = t.dataSource.getRepository(LogBatch);
      const stored = await keptUnapplied(body);
      // The three units before the failure stand: the first and the second message, whole.
      expect(await logs.countBy({ queueId: queues[0] })).toBe(2);
      expect(await logs.countBy({ queueId: queues[2] })).toBe(2);
      expect(await logs.countBy({ queueId: queues[4] })).toBe(0);
      expect(await used(company)).toBe(4);

      await appliedByRetryJob(stored);
      for (const q of [queues[0], queues[2], queues[4]]) expect(await logs.countBy({ queueId: q })).toBe(2);
      expect(await used(company)).toBe(6);
      expect(await batches.countBy({ outcome: IsNull() })).toBe(0);
    });
  });

  it('counts quota once under concurrent copies of a batch', async () => {
    const company = await paidCompany();
    const body = contractLines(company.relayUsername, 'EE33E2839E', 'FF44F3940F').join('\n');
    const answers = await Promise.all([post(body), post(body), post(body)]);
    for (const a of answers) expect(a.status).toBe(200);
    expect(answers.map((a) => a.body.data.records).sort()).toEqual([0, 0, 4]);
    expect(await used(company)).toBe(2);
  });

  it('lines of one queue in any order and in separate batches give the same record', async () => {
    const company = await paidCompany();
    const lines = contractLines(company.relayUsername, '4Dq3m53kSRz1xJ9', 'AB12CD34EF');
    // Deliveries first (no company known yet), then the smtpd/cleanup/qmgr lines.
    const first = await post([lines[4], lines[3]].join('\n')).expect(200);
    expect(first.body.data).toMatchObject({ parsed: 2, records: 2 });
    const early = await logs.findOneByOrFail({ queueId: '4Dq3m53kSRz1xJ9', to: 'jo@example.net' });
    expect(early).toMatchObject({ companyId: null, messageId: null, status: 'sent' });
    expect(await used(company)).toBe(0);

    const second = await post([lines[2], lines[0], lines[1], lines[6]].join('\n')).expect(200);
    expect(second.body.data).toMatchObject({ parsed: 4, records: 2 });
    const late = await logs.findOneByOrFail({ queueId: '4Dq3m53kSRz1xJ9', to: 'jo@example.net' });
    expect(late).toMatchObject({
      companyId: company.id,
      messageId: 'FB62@example.com',
      from: 'news@acme.co.id',
      status: 'sent',
    });
    expect(await used(company)).toBe(2);
  });

  it('a final status wins over a deferral whatever the order; attempts are counted', async () => {
    const company = await paidCompany();
    const q = 'A1B2C3D4E5';
    const deferral = `Nov 21 10:00:00 relay1 postfix/smtp[1]: ${q}: to=<late@example.org>, relay=mx.example.org[10.0.0.1]:25, delay=1, delays=0/0/0/1, dsn=4.2.0, status=deferred (host mx said: 450 4.2.0 Greylisted)`;
    const sent = `Nov 21 10:05:00 relay1 postfix/smtp[2]: ${q}: to=<late@example.org>, relay=mx.example.org[10.0.0.1]:25, delay=301, delays=0/0/0/1, dsn=2.0.0, status=sent (250 2.0.0 Ok id=1a2b-3c)`;
    const client = `Nov 21 09:59:59 relay1 postfix/smtpd[3]: ${q}: client=h[10.1.1.1], sasl_method=PLAIN, sasl_username=${company.relayUsername}`;
    await post([sent, client].join('\n')).expect(200);
    await post(deferral).expect(200);
    const record = await logs.findOneByOrFail({ queueId: q });
    expect(record).toMatchObject({ status: 'sent', attempts: 2, remoteQueueId: '1a2b-3c', dsn: '2.0.0' });
    expect(record.events.map((e) => e.status)).toEqual(['deferred', 'sent']);
    expect(await used(company)).toBe(1);
  });

  it('a record counted once stays counted when a later line takes its counted status away and another gives it back', async () => {
    const company = await paidCompany();
    const q = 'C0FFEE1234';
    const client = `Nov 21 09:59:59 relay1 postfix/smtpd[3]: ${q}: client=h[10.1.1.1], sasl_method=PLAIN, sasl_username=${company.relayUsername}`;
    const deferral = `Nov 21 10:00:00 relay1 postfix/smtp[1]: ${q}: to=<twice@example.org>, relay=mx.example.org[10.0.0.1]:25, delay=1, delays=0/0/0/1, dsn=4.2.0, status=deferred (host mx said: 450 4.2.0 Greylisted)`;
    const refused = `Nov 21 10:01:00 relay1 postfix/smtpd[3]: ${q}: reject: RCPT from h[10.1.1.1]: 550 5.1.1 <twice@example.org>: Recipient address rejected: User unknown; from=<a@acme.co.id> to=<twice@example.org> proto=ESMTP helo=<h>`;
    const sent = `Nov 21 10:05:00 relay1 postfix/smtp[2]: ${q}: to=<twice@example.org>, relay=mx.example.org[10.0.0.1]:25, delay=301, delays=0/0/0/1, dsn=2.0.0, status=sent (250 2.0.0 Ok)`;
    const statusAndUsed = async () => [
      (await logs.findOneByOrFail({ queueId: q })).status,
      await used(company),
    ];

    await post([client, deferral].join('\n')).expect(200);
    expect(await statusAndUsed()).toEqual(['deferred', 1]);
    await post(refused).expect(200);
    expect(await statusAndUsed()).toEqual(['rejected', 1]);
    await post(sent).expect(200);
    expect(await statusAndUsed()).toEqual(['sent', 1]);
  });

  it('takes the JSON forms, NDJSON and gzip', async () => {
    const company = await paidCompany();
    const lines = contractLines(company.relayUsername, 'A0A0A0A0A1', 'B0B0B0B0B1').slice(0, 5);
    const records = lines.map((line) => ({ message: line, host: 'relay2' }));
    const asArray = await post(JSON.stringify(records), 'application/json; charset=utf-8').expect(200);
    expect(asArray.body.data).toEqual({ accepted: 5, parsed: 5, skipped: 0, records: 2 });
    const stored = await logs.findOneByOrFail({ queueId: 'A0A0A0A0A1', to: 'jo@example.net' });
    expect(stored.host).toBe('relay2');

    const lines2 = contractLines(company.relayUsername, 'A0A0A0A0A2', 'B0B0B0B0B2').slice(0, 5);
    const wrapped = await post(
      JSON.stringify({ logs: lines2.map((log) => ({ log })) }),
      'application/json',
    ).expect(200);
    expect(wrapped.body.data).toMatchObject({ accepted: 5, parsed: 5, records: 2 });

    const lines3 = contractLines(company.relayUsername, 'A0A0A0A0A3', 'B0B0B0B0B3').slice(0, 5);
    const one = await post(JSON.stringify({ MESSAGE: lines3[3] }), 'application/json').expect(200);
    expect(one.body.data).toMatchObject({ accepted: 1, parsed: 1, records: 1 });

    const lines4 = contractLines(company.relayUsername, 'A0A0A0A0A4', 'B0B0B0B0B4').slice(0, 5);
    const ndjson = `${lines4.map((message) => JSON.stringify({ message })).join('\n')}\n{not json\n`;
    const nd = await post(gzipSync(ndjson), 'application/x-ndjson', { 'content-encoding': 'gzip' }).expect(
      200,
    );
    expect(nd.body.data).toEqual({ accepted: 6, parsed: 5, skipped: 1, records: 2 });
    // Two records of each complete message; the lone `to=` line names no company yet.
    expect(await used(company)).toBe(6);
  });

  it('the three forms of a line (whole, without its time, the program part alone) give the same records', async () => {
    const company = await paidCompany();
    const whole = contractLines(company.relayUsername, 'A0A0A0A0F1', 'B0B0B0B0F1').slice(0, 7);
    const withoutTime = (line: string) => line.replace(/^\w{3} +\d+ [\d:]+ /, '');
    const programPart = (line: string) => withoutTime(line).replace(/^\S+ /, '');
    const at = (line: string) => `2026-11-21T${/\d\d:\d\d:\d\d/.exec(line)![0]}Z`;
    const forms = {
      text: await post(whole.join('\n')).expect(200),
      json: await post(
        JSON.stringify(whole.map((line) => ({ timestamp: at(line), message: withoutTime(line) }))),
        'application/json',
      ).expect(200),
      // Fluent Bit / Vector records: the host and time apart, the program's part in the line.
      ndjson: await post(
        whole
          .map((line) => JSON.stringify({ timestamp: at(line), host: 'relay1', message: programPart(line) }))
          .join('\n'),
        'application/x-ndjson',
      ).expect(200),
    };
    for (const res of Object.values(forms)) {
      expect(res.body.data).toMatchObject({ accepted: 7, parsed: 7, skipped: 0 });
    }
    expect(forms.text.body.data.records).toBe(3);
    expect(forms.json.body.data.records).toBe(0);
    expect(forms.ndjson.body.data.records).toBe(0);
    const records = await logs.findBy({ queueId: 'A0A0A0A0F1' });
    expect(records.map((r) => [r.host, r.to, r.status, r.companyId]).sort()).toEqual([
      ['relay1', 'jo@example.net', 'sent', company.id],
      ['relay1', 'x@gmail.com', 'bounced', company.id],
    ]);
    expect(await used(company)).toBe(2);
  });

  it('skips a line whose time does not exist, and reads a record time above 10^11 as epoch milliseconds', async () => {
    const company = await paidCompany();
    const [client, , from, sent] = contractLines(company.relayUsername, 'A0A0A0A0F2', 'B0B0B0B0F2');
    const bad = await post([client, from, sent.replace('Nov 21', 'Feb 30')].join('\n')).expect(200);
    expect(bad.body.data).toMatchObject({ accepted: 3, parsed: 2, skipped: 1 });
    const ms = Date.UTC(2026, 10, 21, 18, 58, 35, 250);
    const res = await post(
      JSON.stringify([
        { timestamp: ms, host: 'relay1', message: sent.replace(/^\w{3} +\d+ [\d:]+ relay1 /, '') },
      ]),
      'application/json',
    ).expect(200);
    expect(res.body.data).toMatchObject({ parsed: 1, records: 1 });
    const record = await logs.findOneByOrFail({ queueId: 'A0A0A0A0F2', to: 'jo@example.net' });
    expect(new Date(record.lastEventAt).toISOString()).toBe('2026-11-21T18:58:35.250Z');
  });

  describe('who sent it: sasl_sender= (the raw AUTH= of MAIL FROM) on the client line', () => {
    /** One queue's lines: its client line, then cleanup, qmgr, one delivery and removal. */
    const queue = (q: string, client: string, from: string, to: string) => [
      `Nov 21 11:00:00 relay1 postfix/smtpd[7]: ${q}: ${client}`,
      `Nov 21 11:00:00 relay1 postfix/cleanup[8]: ${q}: message-id=<${q}@example.com>`,
      `Nov 21 11:00:01 relay1 postfix/qmgr[9]: ${q}: from=<${from}>, size=500, nrcpt=1 (queue active)`,
      `Nov 21 11:00:02 relay1 postfix/smtp[10]: ${q}: to=<${to}>, relay=mx.example.org[10.0.0.1]:25, delay=2, delays=0/0/1/1, dsn=2.0.0, status=sent (250 2.0.0 Ok)`,
      `Nov 21 11:00:02 relay1 postfix/qmgr[9]: ${q}: removed`,
    ];
    /** A company whose owner allows `ips` through the API (which tells attribution at once). */
    const companyAllowing = async (ips: string[]) => {
      const owner = await createActiveUser(t);
      await t
        .http()
        .put(`/api/v1/companies/${owner.companyUuid}/allowed-ips`)
        .set(...bearer(owner.accessToken))
        .send({ ips })
        .expect(200);
      return companies.findOneByOrFail({ uuid: owner.companyUuid });
    };

    it('a sasl_username= inside sasl_sender is not identity: the message counts for the authenticated company', async () => {
      const a = await paidCompany();
      const b = await companyAllowing(['198.51.100.41']);
      // MAIL FROM:<x@a-sender.test> AUTH=x,sasl_username=<B's username> from a client authenticated as A.
      const body = [
        ...queue(
          'C29A000001',
          `client=h[192.0.2.41], sasl_method=PLAIN, sasl_username=${a.relayUsername}, sasl_sender=x,sasl_username=${b.relayUsername}`,
          'x@a-sender.test',
          'one@example.org',
        ),
        ...queue(
          'C29A000002',
          `client=h[192.0.2.41], sasl_method=LOGIN, sasl_username=${a.relayUsername}, sasl_sender=x=, sasl_username=${b.relayUsername}`,
          'x@a-sender.test',
          'two@example.org',
        ),
      ].join('\n');
      const res = await post(body).expect(200);
      expect(res.body.data).toMatchObject({ accepted: 10, parsed: 10, skipped: 0, records: 2 });
      for (const q of ['C29A000001', 'C29A000002']) {
        expect(await logs.findOneByOrFail({ queueId: q })).toMatchObject({
          companyId: a.id,
          companyUuid: a.uuid,
          saslUsername: a.relayUsername,
          clientIp: '192.0.2.41',
          status: 'sent',
        });
      }
      expect(await used(a)).toBe(2);
      expect(await used(b)).toBe(0);
    });

    it('a client line whose sasl_sender holds = is read: the message counts for the company of the client address', async () => {
      const b = await companyAllowing(['198.51.100.42/32']);
      const other = await paidCompany();
      // MAIL FROM:<> AUTH=a=b from a client without AUTH, allowed by its address; and the same with
      // another company's username inside the AUTH= parameter.
      const body = [
        ...queue('C29B000001', 'client=unknown[198.51.100.42], sasl_sender=a=b', '', 'three@example.org'),
        ...queue(
          'C29B000002',
          `client=unknown[198.51.100.42], sasl_sender=a=b,sasl_username=${other.relayUsername}`,
          '',
          'four@example.org',
        ),
      ].join('\n');
      const res = await post(body).expect(200);
      expect(res.body.data).toMatchObject({ accepted: 10, parsed: 10, skipped: 0, records: 2 });
      for (const q of ['C29B000001', 'C29B000002']) {
        expect(await logs.findOneByOrFail({ queueId: q })).toMatchObject({
          companyId: b.id,
          companyUuid: b.uuid,
          saslUsername: null,
          clientIp: '198.51.100.42',
          status: 'sent',
        });
      }
      expect(await used(b)).toBe(2);
      expect(await used(other)).toBe(0);
    });
  });

  it('refuses bad bodies with a 4xx in the envelope and writes nothing', async () => {
    const before = await countRows(t, 'log_batches');
    expectFailure((await post('{"logs": [', 'application/json').expect(400)).body, 400);
    expectFailure((await post('<xml/>', 'application/xml').expect(415)).body, 415);
    expectFailure((await post(Buffer.from([0xff, 0xfe, 0x00]), 'text/plain').expect(400)).body, 400);
    expectFailure(
      (await post(Buffer.from('not gzip'), 'text/plain', { 'content-encoding': 'gzip' }).expect(400)).body,
      400,
    );
    // A gzip bomb: 11 MB of zeros inflate past the 10 MB limit.
    const bomb = gzipSync(Buffer.alloc(11 * 1024 * 1024, 0x61));
    expectFailure((await post(bomb, 'text/plain', { 'content-encoding': 'gzip' }).expect(413)).body, 413);
    expect(await countRows(t, 'log_batches')).toBe(before);
  });

  it('refuses a deeply nested JSON batch with the 400 of every route and writes nothing', async () => {
    const before = await countRows(t, 'log_batches');
    const records = await countRows(t, 'clean_logs');
    // 10 KB: 5,000 nested arrays, which JSON.stringify could not write back (stack overflow).
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    for (const body of [deep, `{"logs":${deep}}`]) {
      const res = await post(body, 'application/json').expect(400);
      expectFailure(res.body, 400, 'Request body is nested too deeply');
    }
    expect(await countRows(t, 'log_batches')).toBe(before);
    expect(await countRows(t, 'clean_logs')).toBe(records);
  });

  it('refuses a missing or wrong key (401)', async () => {
    const res = await t
      .http()
      .post('/api/v1/callback-raw-log')
      .set('content-type', 'text/plain')
      .send('x')
      .expect(401);
    expectFailure(res.body, 401);
  });
});
