import { randomUUID } from 'node:crypto';
import { SchedulerRegistry } from '@nestjs/schedule';
import { In, IsNull, Not, Repository } from 'typeorm';
import { DatabaseRuntime } from '../src/database/database-runtime';
import { Company } from '../src/modules/companies/entities/company.entity';
import { CleanLog } from '../src/modules/log-index/entities/clean-log.entity';
import { DeliveryRecordsService } from '../src/modules/delivery/delivery-records.service';
import { ProviderEvent } from '../src/modules/delivery/entities/provider-event.entity';
import { SuppressionEntry } from '../src/modules/suppression/entities/suppression-entry.entity';
import { WebhookEvent } from '../src/modules/webhooks/entities/webhook-event.entity';
import { Webhook } from '../src/modules/webhooks/entities/webhook.entity';
import { countRows, createPaidCompany, createAdmin, expectFailure } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const KEY = 'log-shipper-key-for-tests-0123456789abcdef';
const USER = 'provider';
const PASSWORD = 'provider-webhook-password-0123456789';

/** One message of `relayUsername` to two recipients, handed to the next hop (`queued as <remote>`). */
function messageLines(relayUsername: string, q: string, remote: string, messageId: string): string {
  return [
    `Nov 21 18:58:30 relay1 postfix/smtpd[1]: ${q}: client=h[1.2.3.4], sasl_method=PLAIN, sasl_username=${relayUsername}`,
    `Nov 21 18:58:30 relay1 postfix/cleanup[2]: ${q}: message-id=<${messageId}>`,
    `Nov 21 18:58:31 relay1 postfix/qmgr[3]: ${q}: from=<news@acme.example>, size=920, nrcpt=2 (queue active)`,
    `Nov 21 18:58:35 relay1 postfix/smtp[4]: ${q}: to=<jo@example.net>, relay=smtp.provider.example[10.0.0.9]:587, delay=1, delays=0/0/0/1, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as ${remote})`,
    `Nov 21 18:58:35 relay1 postfix/smtp[4]: ${q}: to=<ann@example.org>, relay=smtp.provider.example[10.0.0.9]:587, delay=1, delays=0/0/0/1, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as ${remote})`,
  ].join('\n');
}

describe('Mail-provider events (POST /callback/mail-provider)', () => {
  let t: TestApp;
  let logs: Repository<CleanLog>;
  let companies: Repository<Company>;
  let suppression: Repository<SuppressionEntry>;

  const send = (body: unknown, auth: [string, string] | null = [USER, PASSWORD]) => {
    const req = t.http().post('/callback/mail-provider');
    if (auth) req.auth(...auth);
    return req.send(body as object);
  };
  const ship = (text: string) =>
    t
      .http()
      .post('/api/v1/callback-raw-log')
      .set('x-api-key', KEY)
      .set('content-type', 'text/plain')
      .send(text)
      .expect(200);

  const paidCompany = () => createPaidCompany(t);

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        LOG_SHIPPER_API_KEY: KEY,
        MAIL_PROVIDER_WEBHOOK_USER: USER,
        MAIL_PROVIDER_WEBHOOK_PASSWORD: PASSWORD,
      },
    });
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

  it('Postmark: a delivery on the provider message id makes the record delivered; a repeat is a duplicate', async () => {
    const company = await paidCompany();
    await ship(messageLines(company.relayUsername, 'AAA0000001', 'PM-0001', 'm1@acme.example'));
    const delivery = {
      RecordType: 'Delivery',
      MessageID: 'PM-0001',
      Recipient: 'Jo@Example.net',
      DeliveredAt: '2026-11-21T18:59:00Z',
      Details: 'Test delivery',
    };
    const res = await send(delivery).expect(200);
    expect(res.body).toMatchObject({ status: 'success', code: 200 });
    expect(res.body.data).toEqual({ accepted: 1, duplicates: 0, skipped: 0 });
    const record = await logs.findOneByOrFail({ queueId: 'AAA0000001', to: 'jo@example.net' });
    expect(record.status).toBe('delivered');
    expect(record.events.map((e) => e.status)).toEqual(['sent', 'delivered']);
    const other = await logs.findOneByOrFail({ queueId: 'AAA0000001', to: 'ann@example.org' });
    expect(other.status).toBe('sent');

    expect((await send(delivery).expect(200)).body.data).toEqual({ accepted: 0, duplicates: 1, skipped: 0 });
    expect(await countRows(t, 'provider_events')).toBe(1);
    const [stored] = await t.dataSource.getRepository(ProviderEvent).find();
    expect(stored).toMatchObject({ recordId: record.id, outcome: 'applied', attempts: 1, lastError: null });
    expect(stored.appliedAt).toBeInstanceOf(Date);
  });

  it('copies of an event posted at once are applied once: one row, one step of history, one suppression', async () => {
    const company = await paidCompany();
    await ship(messageLines(company.relayUsername, 'AAA0000009', 'SG-0009', 'm9@acme.example'));
    const report = [
      {
        event: 'spamreport',
        email: 'jo@example.net',
        timestamp: 1763751700,
        'smtp-id': '<m9@acme.example>',
        sg_event_id: 'e-spam-9',
      },
    ];
    const answers = await Promise.all([send(report), send(report), send(report)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers.map((a) => a.body.data.accepted).sort()).toEqual([0, 0, 1]);
    expect(answers.map((a) => a.body.data.duplicates).sort()).toEqual([0, 1, 1]);
    const record = await logs.findOneByOrFail({ queueId: 'AAA0000009', to: 'jo@example.net' });
    expect(record.events.map((e) => e.status).sort()).toEqual(['complained', 'sent']);
    expect(record.status).toBe('complained');
    const rows = await t.dataSource.getRepository(ProviderEvent).findBy({ eventKey: 'sendgrid:e-spam-9' });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ recordId: record.id, outcome: 'applied' });
    expect(await suppression.countBy({ companyId: company.id, email: 'jo@example.net' })).toBe(1);
  });

  it('SendGrid: matched on smtp-id; open and spam report set the flag and complaint, and suppress; a bad event is skipped', async () => {
    const company = await paidCompany();
    await ship(messageLines(company.relayUsername, 'AAA0000002', 'SG-0002', 'm2@acme.example'));
    const res = await send([
      {
        event: 'open',
        email: 'jo@example.net',
        timestamp: 1763751600,
        'smtp-id': '<m2@acme.example>',
        sg_event_id: 'e-open-2',
      },
      {
        event: 'spamreport',
        email: 'jo@example.net',
        timestamp: 1763751700,
        'smtp-id': '<m2@acme.example>',
        sg_event_id: 'e-spam-2',
      },
      { event: 'delivered', timestamp: 1763751800, sg_event_id: 'e-bad-2' },
    ]).expect(200);
    expect(res.body.data).toEqual({ accepted: 2, duplicates: 0, skipped: 1 });
    const record = await logs.findOneByOrFail({ queueId: 'AAA0000002', to: 'jo@example.net' });
    expect(record).toMatchObject({ status: 'complained', opened: true, clicked: false });
    const entry = await suppression.findOneByOrFail({ companyId: company.id, email: 'jo@example.net' });
    expect(entry).toMatchObject({ reason: 'complaint', source: 'mail_provider' });
  });

  it('one batch of bounces, complaints and unsubscribes for two companies: each list written once, first reason kept, expired renewed, listed left', async () => {
    const [a, b] = [await paidCompany(), await paidCompany()];
    await ship(messageLines(a.relayUsername, 'AAA00000B1', 'SG-00B1', 'mb1@acme.example'));
    await ship(messageLines(b.relayUsername, 'AAA00000B2', 'SG-00B2', 'mb2@acme.example'));
    const past = new Date(Date.now() - 60_000);
    await suppression.save([
      {
        uuid: randomUUID(),
        companyId: a.id,
        email: 'ann@example.org',
        reason: 'manual',
        source: 'user',
        detail: null,
        expiresAt: past,
      },
      {
        uuid: randomUUID(),
        companyId: b.id,
        email: 'jo@example.net',
        reason: 'manual',
        source: 'user',
        detail: null,
        expiresAt: null,
      },
    ]);
    await t.dataSource.getRepository(Webhook).save({
      uuid: randomUUID(),
      companyId: a.id,
      url: 'http://127.0.0.1:9/hooks',
      description: null,
      events: ['suppression.created'],
      domains: [],
      secret: 'whsec_test',
    });
    const event = (e: string, email: string, remote: string, id: string, extra: object = {}) => ({
      event: e,
      email,
      timestamp: 1763752000,
      sg_message_id: `${remote}.filter0001`,
      sg_event_id: id,
      ...extra,
    });
    // Every statement on the suppression list while the batch is applied: a lookup, the renewal and
    // the insert, for all its events and companies (not a lookup and a write for each event).
    const runner = t.dataSource.createQueryRunner();
    const runnerType = Object.getPrototypeOf(runner) as { query: (sql: string) => Promise<unknown> };
    await runner.release();
    const statements: string[] = [];
    const query = runnerType.query;
    const spy = jest.spyOn(runnerType, 'query').mockImplementation(function (this: unknown, ...args) {
      if (/suppression_entries/.test(args[0])) statements.push(args[0].split(' ', 1)[0]);
      return query.apply(this, args);
    });
    const res = await send([
      event('bounce', 'jo@example.net', 'SG-00B1', 'mix-1', {
        status: '5.1.1',
        reason: '550 5.1.1 user unknown',
      }),
      event('spamreport', 'jo@example.net', 'SG-00B1', 'mix-2'),
      event('unsubscribe', 'ann@example.org', 'SG-00B1', 'mix-3'),
      event('spamreport', 'jo@example.net', 'SG-00B2', 'mix-4'),
      event('bounce', 'ann@example.org', 'SG-00B2', 'mix-5', {
        status: '5.1.1',
        reason: '550 5.1.1 no mailbox',
      }),
    ]).expect(200);
    spy.mockRestore();
    expect(res.body.data).toEqual({ accepted: 5, duplicates: 0, skipped: 0 });
    expect(statements).toEqual(['SELECT', 'UPDATE', 'INSERT']);

    const listOf = async (companyId: number) =>
      (await suppression.find({ where: { companyId }, order: { email: 'ASC' } })).map((e) => ({
        email: e.email,
        reason: e.reason,
        source: e.source,
        detail: e.detail,
        expiresAt: e.expiresAt,
      }));
    expect(await listOf(a.id)).toEqual([
      {
        email: 'ann@example.org',
        reason: 'unsubscribe',
        source: 'mail_provider',
        detail: null,
        expiresAt: null,
      },
      {
        email: 'jo@example.net',
        reason: 'hard_bounce',
        source: 'mail_provider',
        detail: '550 5.1.1 user unknown',
        expiresAt: null,
      },
    ]);
    expect(await listOf(b.id)).toEqual([
      {
        email: 'ann@example.org',
        reason: 'hard_bounce',
        source: 'mail_provider',
        detail: '550 5.1.1 no mailbox',
        expiresAt: null,
      },
      { email: 'jo@example.net', reason: 'manual', source: 'user', detail: null, expiresAt: null },
    ]);
    // The company with an endpoint: one suppression.created for each entry made or renewed.
    const created = await t.dataSource
      .getRepository(WebhookEvent)
      .findBy({ companyId: In([a.id, b.id]), type: 'suppression.created' });
    expect(
      created.map((e) => JSON.parse(e.payload).data).sort((x, y) => x.email.localeCompare(y.email)),
    ).toEqual([
      expect.objectContaining({ email: 'ann@example.org', reason: 'unsubscribe', source: 'mail_provider' }),
      expect.objectContaining({ email: 'jo@example.net', reason: 'hard_bounce', source: 'mail_provider' }),
    ]);
    expect(created.every((e) => e.companyId === a.id)).toBe(true);
  });

  it('SparkPost: an event before its message is kept, and applied (hard bounce → suppression) when the record arrives', async () => {
    const company = await paidCompany();
    const bounce = [
      {
        msys: {
          message_event: {
            type: 'bounce',
            event_id: 'sp-bounce-3',
            message_id: 'SP-0003',
            rcpt_to: 'ann@example.org',
            timestamp: '1763751900',
            bounce_class: '10',
            raw_reason: '550 5.1.1 user unknown',
          },
        },
      },
      { msys: {} },
    ];
    expect((await send(bounce).expect(200)).body.data).toEqual({ accepted: 1, duplicates: 0, skipped: 1 });
    expect(await suppression.countBy({ companyId: company.id, email: 'ann@example.org' })).toBe(0);

    await ship(messageLines(company.relayUsername, 'AAA0000003', 'SP-0003', 'm3@acme.example'));
    const record = await logs.findOneByOrFail({ queueId: 'AAA0000003', to: 'ann@example.org' });
    expect(record).toMatchObject({ status: 'bounced', response: '550 5.1.1 user unknown' });
    const entry = await suppression.findOneByOrFail({ companyId: company.id, email: 'ann@example.org' });
    expect(entry).toMatchObject({ reason: 'hard_bounce', source: 'mail_provider' });
    // Both recipients were handed over: two counted, the late bounce counts nothing more.
    expect((await companies.findOneByOrFail({ id: company.id })).used).toBe(2);
  });

  it('a failure while applying answers 503 and keeps the events; the provider’s retry applies them', async () => {
    const company = await paidCompany();
    await ship(messageLines(company.relayUsername, 'AAA0000005', 'FL-0005', 'm5@acme.example'));
    const body = [
      {
        event: 'delivered',
        email: 'jo@example.net',
        timestamp: 1763751600,
        sg_message_id: 'FL-0005.f',
        sg_event_id: 'fail-1',
      },
      {
        event: 'delivered',
        email: 'nobody@example.com',
        timestamp: 1763751600,
        sg_message_id: 'FL-9999.f',
        sg_event_id: 'fail-2',
      },
    ];
    const records = t.app.get(DeliveryRecordsService);
    const spy = jest.spyOn(records, 'rebuild').mockRejectedValueOnce(new Error('lock timeout'));
    const res = await send(body).expect(503);
    expectFailure(res.body, 503, 'Mail-provider events stored but not applied yet; retry later');
    spy.mockRestore();
    const events = t.dataSource.getRepository(ProviderEvent);
    const stored = await events.find({
      where: { eventKey: In(['sendgrid:fail-1', 'sendgrid:fail-2']) },
      order: { eventKey: 'ASC' },
    });
    expect(stored).toEqual([
      expect.objectContaining({
        eventKey: 'sendgrid:fail-1',
        outcome: null,
        attempts: 1,
        recordId: null,
        lastError: 'Error: lock timeout',
      }),
      expect.objectContaining({
        eventKey: 'sendgrid:fail-2',
        outcome: null,
        attempts: 1,
        recordId: null,
        lastError: 'Error: lock timeout',
      }),
    ]);
    expect((await logs.findOneByOrFail({ queueId: 'AAA0000005', to: 'jo@example.net' })).status).toBe('sent');

    // SendGrid sends the batch again: both applied now, nothing counted as a duplicate.
    expect((await send(body).expect(200)).body.data).toEqual({ accepted: 2, duplicates: 0, skipped: 0 });
    const record = await logs.findOneByOrFail({ queueId: 'AAA0000005', to: 'jo@example.net' });
    expect(record.status).toBe('delivered');
    expect(
      await events.find({
        where: { eventKey: In(['sendgrid:fail-1', 'sendgrid:fail-2']) },
        order: { eventKey: 'ASC' },
      }),
    ).toEqual([
      expect.objectContaining({ outcome: 'applied', attempts: 2, recordId: record.id, lastError: null }),
      // Its message is not known: an ordinary state, applied when the log lines arrive, never retried.
      expect.objectContaining({ outcome: 'waiting', attempts: 2, recordId: null, lastError: null }),
    ]);
    expect((await send(body).expect(200)).body.data).toEqual({ accepted: 0, duplicates: 2, skipped: 0 });
  });

  it('a batch beyond one unit of bulk work (here 2 events) is applied a unit per transaction: a failed unit is kept unapplied (503), the others stand', async () => {
    const company = await paidCompany();
    await ship(messageLines(company.relayUsername, 'AAA0000006', 'FL-0006', 'm6@acme.example'));
    const event = (id: string, email: string, message: string) => ({
      event: 'delivered',
      email,
      timestamp: 1763751600,
      sg_message_id: `${message}.f`,
      sg_event_id: id,
    });
    const body = [
      event('unit-1a', 'jo@example.net', 'FL-0006'),
      event('unit-1b', 'nobody@example.com', 'FL-9998'),
      event('unit-2a', 'ann@example.org', 'FL-0006'),
      event('unit-2b', 'nobody@example.com', 'FL-9997'),
    ];
    const unit = jest.replaceProperty(t.app.get(DatabaseRuntime), 'bulkUnit', 2);
    const spy = jest
      .spyOn(t.app.get(DeliveryRecordsService), 'rebuild')
      .mockRejectedValueOnce(new Error('lock timeout'));
    try {
      expectFailure(
        (await send(body).expect(503)).body,
        503,
        'Mail-provider events stored but not applied yet; retry later',
      );
      const events = t.dataSource.getRepository(ProviderEvent);
      const keys = ['sendgrid:unit-1a', 'sendgrid:unit-1b', 'sendgrid:unit-2a', 'sendgrid:unit-2b'];
      const stored = await events.find({ where: { eventKey: In(keys) }, order: { eventKey: 'ASC' } });
      expect(stored.map((e) => [e.eventKey, e.outcome, e.attempts, e.lastError])).toEqual([
        ['sendgrid:unit-1a', null, 1, 'Error: lock timeout'],
        ['sendgrid:unit-1b', null, 1, 'Error: lock timeout'],
        ['sendgrid:unit-2a', 'applied', 1, null],
        ['sendgrid:unit-2b', 'waiting', 1, null],
      ]);
      expect((await logs.findOneByOrFail({ queueId: 'AAA0000006', to: 'jo@example.net' })).status).toBe(
        'sent',
      );
      expect((await logs.findOneByOrFail({ queueId: 'AAA0000006', to: 'ann@example.org' })).status).toBe(
        'delivered',
      );

      // The provider sends the batch again: the failed unit is applied, the other is a copy.
      expect((await send(body).expect(200)).body.data).toEqual({ accepted: 2, duplicates: 2, skipped: 0 });
      expect((await logs.findOneByOrFail({ queueId: 'AAA0000006', to: 'jo@example.net' })).status).toBe(
        'delivered',
      );
      expect(await events.countBy({ eventKey: In(keys), lastError: Not(IsNull()) })).toBe(0);
    } finally {
      spy.mockRestore();
      unit.restore();
    }
  });

  it('an event stored but not applied (a failure) is applied by the retry-callbacks job', async () => {
    const company = await paidCompany();
    await ship(messageLines(company.relayUsername, 'AAA0000004', 'RT-0004', 'm4@acme.example'));
    // What a failed application leaves behind: the event stored, unapplied, with its error.
    const events = t.dataSource.getRepository(ProviderEvent);
    await events.save(
      events.create({
        eventKey: 'postmark:retry-test',
        provider: 'postmark',
        type: 'delivered',
        recipient: 'jo@example.net',
        messageId: null,
        providerMessageId: 'RT-0004',
        at: new Date(),
        bounceKind: null,
        dsn: null,
        reason: null,
        raw: '{}',
        recordId: null,
        webhookId: null,
        outcome: null,
        attempts: 1,
        appliedAt: null,
        lastError: 'QueryFailedError: database is locked',
      }),
    );
    const superAdmin = await createAdmin(t, 'superAdmin');
    const res = await t
      .http()
      .get('/api/v1/t3st-job?job=retry-callbacks')
      .set('authorization', `Bearer ${superAdmin.accessToken}`)
      .expect(200);
    expect(res.body.data.items).toEqual([
      expect.objectContaining({ job: 'retry-callbacks', ok: true, affected: 1 }),
    ]);
    const record = await logs.findOneByOrFail({ queueId: 'AAA0000004', to: 'jo@example.net' });
    expect(record.status).toBe('delivered');
    expect(await events.findOneByOrFail({ eventKey: 'postmark:retry-test' })).toMatchObject({
      recordId: record.id,
      outcome: 'applied',
      lastError: null,
      attempts: 2,
    });
  });

  it('refuses wrong credentials (401 with WWW-Authenticate) and a body that is no provider payload (400)', async () => {
    const before = await countRows(t, 'provider_events');
    const res = await send({ RecordType: 'Delivery' }, [USER, 'wrong']).expect(401);
    expectFailure(res.body, 401);
    expect(res.headers['www-authenticate']).toContain('Basic');
    expectFailure((await send({ hello: 'world' }).expect(400)).body, 400);
    expectFailure((await send([]).expect(400)).body, 400);
    expect(await countRows(t, 'provider_events')).toBe(before);
  });
});
