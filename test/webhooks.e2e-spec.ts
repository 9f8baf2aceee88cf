import { Webhook as StandardWebhook } from 'standardwebhooks';
import { In } from 'typeorm';
import { Company } from '../src/modules/companies/entities/company.entity';
import { WebhookAttempt } from '../src/modules/webhooks/entities/webhook-attempt.entity';
import { WebhookDelivery } from '../src/modules/webhooks/entities/webhook-delivery.entity';
import { WebhookEvent } from '../src/modules/webhooks/entities/webhook-event.entity';
import { Webhook } from '../src/modules/webhooks/entities/webhook.entity';
import {
  bearer,
  countRows,
  createActiveUser,
  createAdmin,
  expectFailure,
  LoggedIn,
  RegisteredUser,
} from './support/factories';
import { createTestApp, freshDatabase, FreshDatabase, TestApp } from './support/test-app';
import { until } from './support/until';
import { ReceivedWebhook, WebhookReceiver } from './support/webhook-receiver';

const LOG_KEY = 'log-shipper-key-for-webhook-tests-0123456789';
const ENV = {
  LOG_SHIPPER_API_KEY: LOG_KEY,
  LOG_TIMEZONE: 'UTC',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  // Processes on one database share it, as replicas do: the signing secrets are sealed with it.
  ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
};

type Owner = RegisteredUser & LoggedIn;

/**
 * How long the tests wait for the dispatcher to record what the receiver already got: only so
 * that a state never reached fails clearly; a busy machine may take long (the file's tests may
 * take 2 minutes).
 */
const RECORDED_WITHIN = 100_000;
jest.setTimeout(120_000);

/** Postfix lines of one message of `relayUsername` to `to`: accepted, then `outcome`. */
function messageLines(
  relayUsername: string,
  queueId: string,
  to: string,
  outcome: 'sent' | 'deferred' | 'bounced',
  second = 35,
): string[] {
  const result = {
    sent: 'dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as F12DF84004)',
    deferred: 'dsn=4.2.0, status=deferred (host mx.example.net[192.0.2.7] said: 450 4.2.0 Greylisted)',
    bounced:
      'dsn=5.1.1, status=bounced (host mx.example.net[192.0.2.7] said: 550 5.1.1 <x>: no such user (in reply to RCPT TO command))',
  }[outcome];
  return [
    `Nov 21 18:58:30 relay1 postfix/smtpd[22590]: ${queueId}: client=host.example[192.0.2.50], sasl_method=PLAIN, sasl_username=${relayUsername}`,
    `Nov 21 18:58:30 relay1 postfix/cleanup[22599]: ${queueId}: message-id=<${queueId}@acme.test>`,
    `Nov 21 18:58:31 relay1 postfix/qmgr[15878]: ${queueId}: from=<news@acme.test>, size=920, nrcpt=1 (queue active)`,
    `Nov 21 18:58:${second} relay1 postfix/smtp[301]: ${queueId}: to=<${to}>, relay=mx.example.net[192.0.2.7]:25, delay=5, delays=1/0/2/2, ${result}`,
  ];
}

async function ownerWithCompany(t: TestApp): Promise<{ owner: Owner; company: Company }> {
  const owner = await createActiveUser(t);
  const company = await t.dataSource.getRepository(Company).findOneByOrFail({ uuid: owner.companyUuid });
  return { owner, company };
}

async function addWebhook(
  t: TestApp,
  owner: LoggedIn,
  body: Record<string, unknown>,
): Promise<{ uuid: string; secret: string }> {
  const res = await t
    .http()
    .post('/api/v1/webhooks')
    .set(...bearer(owner.accessToken))
    .send({ events: ['*'], ...body });
  expect([res.status, res.body.msg]).toEqual([201, 'Webhook created']);
  return { uuid: res.body.data.webhook.uuid, secret: res.body.data.secret };
}

const postLogs = (t: TestApp, lines: string[]) =>
  t
    .http()
    .post('/api/v1/callback-raw-log')
    .set('x-api-key', LOG_KEY)
    .set('content-type', 'text/plain')
    .send(lines.join('\n'));

/** What a customer does with a request: verify it with the standardwebhooks package. */
function verified(request: ReceivedWebhook, secret: string): unknown {
  return new StandardWebhook(secret).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  });
}

describe('Event webhooks (platform.md "Event webhooks")', () => {
  let receiver: WebhookReceiver;
  let t: TestApp;

  beforeAll(async () => {
    receiver = new WebhookReceiver();
    await receiver.start();
    t = await createTestApp({ env: ENV });
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  describe('endpoints', () => {
    it('makes an endpoint with a whsec_ secret, shows it without the secret, changes and deletes it', async () => {
      const { owner } = await ownerWithCompany(t);
      const created = await t
        .http()
        .post('/api/v1/webhooks')
        .set(...bearer(owner.accessToken))
        .send({ url: receiver.url('/crud'), events: ['email.bounced', 'email.bounced'], description: 'ops' })
        .expect(201);
      const { webhook, secret } = created.body.data;
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(webhook).toEqual({
        uuid: expect.any(String),
        companyUuid: owner.companyUuid,
        url: receiver.url('/crud'),
        description: 'ops',
        events: ['email.bounced'],
        domains: [],
        enabled: true,
        disabledReason: null,
        createdAt: expect.any(String),
        lastSuccessAt: null,
        lastFailureAt: null,
        failingSince: null,
      });
      const row = await t.dataSource
        .getRepository(Webhook)
        .createQueryBuilder('w')
        .addSelect('w.secret')
        .where('w.uuid = :uuid', { uuid: webhook.uuid })
        .getOneOrFail();
      expect(row.secret).not.toContain(secret.slice(6));

      const view = await t
        .http()
        .get(`/api/v1/webhooks/${webhook.uuid}`)
        .set(...bearer(owner.accessToken))
        .expect(200);
      expect(view.body.data).toEqual({ ...webhook, last24h: { delivered: 0, failed: 0, pending: 0 } });
      expect(view.text).not.toContain(secret);
      const read = await t
        .http()
        .get(`/api/v1/webhooks/${webhook.uuid}/secret`)
        .set(...bearer(owner.accessToken))
        .expect(200);
      expect(read.body.data).toEqual({ secret });

      const patched = await t
        .http()
        .patch(`/api/v1/webhooks/${webhook.uuid}`)
        .set(...bearer(owner.accessToken))
        .send({ enabled: false, events: ['*'], description: null })
        .expect(200);
      expect(patched.body.data).toMatchObject({
        enabled: false,
        disabledReason: 'manual',
        events: ['*'],
        description: null,
      });
      await t
        .http()
        .delete(`/api/v1/webhooks/${webhook.uuid}`)
        .set(...bearer(owner.accessToken))
        .expect(200);
      expect(await t.dataSource.getRepository(Webhook).findOneBy({ uuid: webhook.uuid })).toBeNull();
    });

    it('refuses bad input with a 400 and writes nothing; at most 10 endpoints (409); another company sees none', async () => {
      const { owner } = await ownerWithCompany(t);
      const count = () => t.dataSource.getRepository(Webhook).count();
      const before = await count();
      for (const body of [
        { url: 'ftp://example.com/x', events: ['*'] },
        { url: 'https://user:pw@example.com/x', events: ['*'] },
        { url: `https://example.com/${'a'.repeat(2040)}`, events: ['*'] },
        { url: receiver.url(), events: [] },
        { url: receiver.url(), events: ['email.sometimes'] },
        { url: receiver.url(), events: ['*'], domains: ['not-ours.example'] },
        { url: receiver.url(), events: ['*'], secret: 'mine' },
      ]) {
        const res = await t
          .http()
          .post('/api/v1/webhooks')
          .set(...bearer(owner.accessToken))
          .send(body);
        expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 400]);
      }
      expect(await count()).toBe(before);
      const made = [];
      for (let i = 0; i < 10; i++)
        made.push(await addWebhook(t, owner, { url: receiver.url(`/limit-${i}`) }));
      const over = await t
        .http()
        .post('/api/v1/webhooks')
        .set(...bearer(owner.accessToken))
        .send({ url: receiver.url(), events: ['*'] });
      expectFailure(over.body, 409, /at most 10 webhooks/);
      const other = await createActiveUser(t);
      const list = await t
        .http()
        .get('/api/v1/webhooks')
        .set(...bearer(other.accessToken))
        .expect(200);
      expect(list.body.data.items).toEqual([]);
      expectFailure(
        (
          await t
            .http()
            .get(`/api/v1/webhooks/${made[0].uuid}`)
            .set(...bearer(other.accessToken))
        ).body,
        404,
        'Webhook not found',
      );
      expectFailure(
        (
          await t
            .http()
            .get(`/api/v1/webhooks/${made[0].uuid}/secret`)
            .set(...bearer(other.accessToken))
        ).body,
        404,
        'Webhook not found',
      );
    });
  });

  describe('delivery', () => {
    it('delivers the events of a log batch, signed so that standardwebhooks verifies them, in order per record', async () => {
      const { owner, company } = await ownerWithCompany(t);
      const hook = await addWebhook(t, owner, {
        url: receiver.url('/mail'),
        events: ['email.sent', 'email.deferred', 'email.bounced'],
      });
      const lines = [
        ...messageLines(company.relayUsername, 'AA1000001A', 'jo@example.net', 'deferred', 35),
        ...messageLines(company.relayUsername, 'AA1000001A', 'jo@example.net', 'sent', 45).slice(3),
        ...messageLines(company.relayUsername, 'AA1000002B', 'nobody@example.net', 'bounced'),
      ];
      await postLogs(t, lines).expect(200);
      await receiver.waitFor(() => receiver.to('/mail').length === 3);
      const got = receiver.to('/mail');
      for (const request of got) {
        expect(verified(request, hook.secret)).toEqual(request.json);
        expect(request.headers['content-type']).toBe('application/json');
        expect(request.headers['user-agent']).toBe('EmailRelay-Webhooks/1');
        expect(request.headers['webhook-id']).toMatch(/^evt_[A-Za-z0-9_-]{22}$/);
      }
      const byType = Object.fromEntries(got.map((r) => [r.json.type, r.json]));
      expect(Object.keys(byType).sort()).toEqual(['email.bounced', 'email.deferred', 'email.sent']);
      expect(byType['email.bounced'].data).toMatchObject({
        companyUuid: owner.companyUuid,
        domain: 'acme.test',
        from: 'news@acme.test',
        to: 'nobody@example.net',
        status: 'bounced',
        dsn: '5.1.1',
        messageId: 'AA1000002B@acme.test',
        relay: 'mx.example.net[192.0.2.7]:25',
        bounce: { type: 'hard' },
        seq: 1,
      });
      // The two events of one record: numbered, the earlier delivered first.
      const deferred = byType['email.deferred'].data;
      const sent = byType['email.sent'].data;
      expect([deferred.recordId, deferred.seq, sent.seq]).toEqual([sent.recordId, 1, 2]);
      expect(got.findIndex((r) => r.json.type === 'email.deferred')).toBeLessThan(
        got.findIndex((r) => r.json.type === 'email.sent'),
      );

      // The same batch again: no second event.
      const events = await t.dataSource.getRepository(WebhookEvent).count();
      await postLogs(t, lines).expect(200);
      expect(await t.dataSource.getRepository(WebhookEvent).count()).toBe(events);
      // Recorded once each answer is read: wait for the third record's commit.
      await until(
        async () =>
          (await t.dataSource
            .getRepository(WebhookDelivery)
            .countBy({ type: 'email.sent', status: 'delivered' })) >= 1 &&
          (await t.dataSource.getRepository(WebhookDelivery).countBy({ status: 'pending' })) === 0,
        'every delivery of the batch is recorded',
        RECORDED_WITHIN,
      );
      const delivered = await t
        .http()
        .get(`/api/v1/webhooks/${hook.uuid}`)
        .set(...bearer(owner.accessToken))
        .expect(200);
      expect(delivered.body.data.last24h).toEqual({ delivered: 3, failed: 0, pending: 0 });
    });

    it('delivers only the types and domains an endpoint asks for', async () => {
      const { owner, company } = await ownerWithCompany(t);
      await addWebhook(t, owner, { url: receiver.url('/bounces-only'), events: ['email.bounced'] });
      await addWebhook(t, owner, { url: receiver.url('/other-domain'), events: ['*'], domains: [] });
      await t.dataSource
        .getRepository(Webhook)
        .update({ url: receiver.url('/other-domain') }, { domains: ['elsewhere.test'] });
      await postLogs(t, [
        ...messageLines(company.relayUsername, 'BB1000001A', 'a@example.net', 'sent'),
        ...messageLines(company.relayUsername, 'BB1000002B', 'b@example.net', 'bounced'),
      ]).expect(200);
      await receiver.waitFor(() => receiver.to('/bounces-only').length === 1);
      expect(receiver.to('/bounces-only')[0].json.type).toBe('email.bounced');
      await t.settle();
      const deliveries = await t.dataSource
        .getRepository(WebhookDelivery)
        .createQueryBuilder('d')
        .innerJoin(Webhook, 'w', 'w.id = d.webhook_id')
        .where('w.url = :url', { url: receiver.url('/other-domain') })
        .andWhere("d.type LIKE 'email.%'")
        .getCount();
      expect(deliveries).toBe(0);
    });

    it('tells of the company’s suppression entries and state changes', async () => {
      const { owner, company } = await ownerWithCompany(t);
      await addWebhook(t, owner, {
        url: receiver.url('/state'),
        events: ['suppression.created', 'suppression.deleted', 'company.suspended', 'company.reactivated'],
      });
      // A hard bounce suppresses its recipient: one suppression.created, from the log.
      await postLogs(
        t,
        messageLines(company.relayUsername, 'GG1000001A', 'gone@example.net', 'bounced'),
      ).expect(200);
      await receiver.waitFor(() => receiver.to('/state').length === 1);
      expect(receiver.to('/state')[0].json).toMatchObject({
        type: 'suppression.created',
        data: {
          companyUuid: owner.companyUuid,
          email: 'gone@example.net',
          reason: 'hard_bounce',
          source: 'log',
        },
      });
      // Added and removed by a user.
      await t
        .http()
        .post('/api/v1/suppression')
        .set(...bearer(owner.accessToken))
        .send({ emails: ['x@example.org'] })
        .expect(201);
      await receiver.waitFor(() => receiver.to('/state').length === 2);
      const list = await t
        .http()
        .get('/api/v1/suppression?search=x%40example.org')
        .set(...bearer(owner.accessToken))
        .expect(200);
      await t
        .http()
        .delete(`/api/v1/suppression/${list.body.data.items[0].uuid}`)
        .set(...bearer(owner.accessToken))
        .expect(200);
      await receiver.waitFor(() => receiver.to('/state').length === 3);
      expect(
        receiver
          .to('/state')
          .slice(1)
          .map((r) => [r.json.type, r.json.data.email, r.json.data.source]),
      ).toEqual([
        ['suppression.created', 'x@example.org', 'user'],
        ['suppression.deleted', 'x@example.org', 'user'],
      ]);
      // Suspended and reactivated by an admin.
      const admin = await createAdmin(t, 'admin');
      for (const status of ['suspended', 'active']) {
        await t
          .http()
          .patch(`/api/v1/admins/companies/${company.uuid}`)
          .set(...bearer(admin.accessToken))
          .send({ status, ...(status === 'suspended' && { suspendedReason: 'abuse report' }) })
          .expect(200);
      }
      await receiver.waitFor(() => receiver.to('/state').length === 5);
      expect(
        receiver
          .to('/state')
          .slice(3)
          .map((r) => [r.json.type, r.json.data.status]),
      ).toEqual([
        ['company.suspended', 'suspended'],
        ['company.reactivated', 'active'],
      ]);
    });

    it('tells when a company reaches 80 % and 100 % of its quota, once each', async () => {
      const { owner, company } = await ownerWithCompany(t);
      await addWebhook(t, owner, {
        url: receiver.url('/quota'),
        events: ['quota.warning', 'quota.exhausted'],
      });
      await t.dataSource.getRepository(Company).update(
        { id: company.id },
        {
          packageUuid: '5f0c6f1e-8d3a-4a57-9a43-1b2c3d4e5f60',
          periodStart: new Date(Date.now() - 86_400_000),
          periodEnd: new Date(Date.now() + 30 * 86_400_000),
          quota: 10,
          used: 7,
        },
      );
      const lines = (n: number) =>
        Array.from({ length: n }, (_, i) =>
          messageLines(
            company.relayUsername,
            `QQ${String(100000 + n * 10 + i)}A`,
            `q${n}-${i}@example.net`,
            'sent',
          ),
        ).flat();
      await postLogs(t, lines(1)).expect(200);
      await receiver.waitFor(() => receiver.to('/quota').length === 1);
      await postLogs(t, lines(2)).expect(200);
      await receiver.waitFor(() => receiver.to('/quota').length === 2);
      expect(receiver.to('/quota').map((r) => [r.json.type, r.json.data.used, r.json.data.quota])).toEqual([
        ['quota.warning', 8, 10],
        ['quota.exhausted', 10, 10],
      ]);
      await postLogs(t, lines(3)).expect(200);
      await t.settle();
      expect(
        await t.dataSource
          .getRepository(WebhookEvent)
          .countBy({ companyId: company.id, type: 'quota.warning' }),
      ).toBe(1);
    });

    it('tries again after a 500: one delivery, two attempts, the same webhook-id', async () => {
      const { owner, company } = await ownerWithCompany(t);
      const hook = await addWebhook(t, owner, { url: receiver.url('/flaky'), events: ['email.sent'] });
      let calls = 0;
      receiver.answer = (r) =>
        r.path === '/flaky' && calls++ === 0 ? { status: 500, body: 'try later' } : { status: 200 };
      try {
        await postLogs(t, messageLines(company.relayUsername, 'CC1000001A', 'c@example.net', 'sent')).expect(
          200,
        );
        await receiver.waitFor(() => receiver.to('/flaky').length === 2);
      } finally {
        receiver.answer = () => ({ status: 200 });
      }
      const [first, second] = receiver.to('/flaky');
      expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
      expect(verified(second, hook.secret)).toEqual(second.json);
      const list = await t
        .http()
        .get(`/api/v1/webhooks/${hook.uuid}/deliveries`)
        .set(...bearer(owner.accessToken))
        .expect(200);
      expect(list.body.data.items).toHaveLength(1);
      const [delivery] = list.body.data.items;
      await until(
        async () =>
          (await t.dataSource.getRepository(WebhookDelivery).findOneByOrFail({ uuid: delivery.uuid }))
            .status === 'delivered',
        'the second attempt is recorded',
        RECORDED_WITHIN,
      );
      const detail = await t
        .http()
        .get(`/api/v1/webhooks/${hook.uuid}/deliveries/${delivery.uuid}`)
        .set(...bearer(owner.accessToken))
        .expect(200);
      expect(detail.body.data).toMatchObject({
        eventId: first.headers['webhook-id'],
        type: 'email.sent',
        status: 'delivered',
        attempts: 2,
        payload: first.json,
      });
      expect(
        detail.body.data.attemptHistory.map((a: { status: number; body: string }) => [a.status, a.body]),
      ).toEqual([
        [500, 'try later'],
        [200, 'ok'],
      ]);
    });

    it('disables an endpoint that answers 410 Gone, and tells the owners', async () => {
      const { owner, company } = await ownerWithCompany(t);
      const hook = await addWebhook(t, owner, { url: receiver.url('/gone'), events: ['email.sent'] });
      receiver.answer = (r) => (r.path === '/gone' ? { status: 410 } : { status: 200 });
      try {
        await postLogs(t, messageLines(company.relayUsername, 'DD1000001A', 'd@example.net', 'sent')).expect(
          200,
        );
        await receiver.waitFor(() => receiver.to('/gone').length === 1);
      } finally {
        receiver.answer = () => ({ status: 200 });
      }
      const mail = await t.smtp.waitFor(owner.email, /webhook endpoint was disabled/i);
      expect(mail).toBeDefined();
      const view = await t
        .http()
        .get(`/api/v1/webhooks/${hook.uuid}`)
        .set(...bearer(owner.accessToken))
        .expect(200);
      expect(view.body.data).toMatchObject({
        enabled: false,
        disabledReason: 'gone',
        failingSince: expect.any(String),
      });
      expect(view.body.data.last24h).toEqual({ delivered: 0, failed: 1, pending: 0 });
    });

    it('does not let a slow endpoint delay another company’s events', async () => {
      const slow = await ownerWithCompany(t);
      const quick = await ownerWithCompany(t);
      await addWebhook(t, slow.owner, { url: receiver.url('/slow'), events: ['email.sent'] });
      await addWebhook(t, quick.owner, { url: receiver.url('/quick'), events: ['email.sent'] });
      receiver.answer = (r) => (r.path === '/slow' ? 'hold' : { status: 200 });
      try {
        await postLogs(
          t,
          messageLines(slow.company.relayUsername, 'EE1000001A', 's@example.net', 'sent'),
        ).expect(200);
        await receiver.waitFor(() => receiver.to('/slow').length === 1);
        await postLogs(
          t,
          messageLines(quick.company.relayUsername, 'EE1000002B', 'q@example.net', 'sent'),
        ).expect(200);
        // Delivered while the slow endpoint still holds its request.
        await receiver.waitFor(() => receiver.to('/quick').length === 1);
      } finally {
        receiver.answer = () => ({ status: 200 });
        receiver.release();
      }
    });

    it('does not let slow endpoints holding every slot of WEBHOOK_CONCURRENCY delay another company’s events', async () => {
      const narrow = await createTestApp({ env: { ...ENV, WEBHOOK_CONCURRENCY: '2' } });
      try {
        const slow = await ownerWithCompany(narrow);
        const quick = await ownerWithCompany(narrow);
        await addWebhook(narrow, slow.owner, { url: receiver.url('/slow-all'), events: ['email.sent'] });
        await addWebhook(narrow, quick.owner, { url: receiver.url('/quick-too'), events: ['email.sent'] });
        receiver.answer = (r) => (r.path === '/slow-all' ? 'hold' : { status: 200 });
        await postLogs(narrow, [
          ...messageLines(slow.company.relayUsername, 'EE2000001A', 's1@example.net', 'sent'),
          ...messageLines(slow.company.relayUsername, 'EE2000002A', 's2@example.net', 'sent'),
        ]).expect(200);
        // Both slots are the slow endpoint's attempts, held unanswered.
        await receiver.waitFor(() => receiver.to('/slow-all').length === 2);
        await postLogs(
          narrow,
          messageLines(quick.company.relayUsername, 'EE2000004B', 'q@example.net', 'sent'),
        ).expect(200);
        await receiver.waitFor(() => receiver.to('/quick-too').length === 1);
        // Delivered while the slow endpoint still holds both: none of its attempts has ended.
        const slowHook = await narrow.dataSource
          .getRepository(Webhook)
          .findOneByOrFail({ companyId: slow.company.id });
        const slowDeliveries = await narrow.dataSource
          .getRepository(WebhookDelivery)
          .findBy({ webhookId: slowHook.id });
        expect(slowDeliveries).toHaveLength(2);
        const slowAttempts = await narrow.dataSource
          .getRepository(WebhookAttempt)
          .countBy({ deliveryId: In(slowDeliveries.map((d) => d.id)) });
        expect(slowAttempts).toBe(0);
        expect(receiver.to('/slow-all')).toHaveLength(2);
      } finally {
        receiver.answer = () => ({ status: 200 });
        receiver.release();
        await narrow.close();
      }
    });

    it('sends a sample event on demand, and sends a delivery again (retry) or a window of them (replay)', async () => {
      const { owner } = await ownerWithCompany(t);
      const hook = await addWebhook(t, owner, { url: receiver.url('/sample'), events: ['email.sent'] });
      const queued = await t
        .http()
        .post(`/api/v1/webhooks/${hook.uuid}/test`)
        .set(...bearer(owner.accessToken))
        .send({})
        .expect(200);
      await receiver.waitFor(() => receiver.to('/sample').length === 1);
      const [sample] = receiver.to('/sample');
      expect(sample.json).toMatchObject({
        type: 'webhook.test',
        data: { companyUuid: owner.companyUuid, test: true },
      });
      expect(verified(sample, hook.secret)).toEqual(sample.json);

      await t
        .http()
        .post(`/api/v1/webhooks/${hook.uuid}/deliveries/${queued.body.data.deliveryUuid}/retry`)
        .set(...bearer(owner.accessToken))
        .expect(200);
      await receiver.waitFor(() => receiver.to('/sample').length === 2);
      expect(receiver.to('/sample')[1].headers['webhook-id']).toBe(sample.headers['webhook-id']);
      // The second attempt is recorded once its answer is: then it is a delivered delivery again.
      const deliveries = t.dataSource.getRepository(WebhookDelivery);
      const uuid = queued.body.data.deliveryUuid as string;
      await until(
        async () => (await deliveries.findOneByOrFail({ uuid })).attempts === 2,
        'the retry is recorded',
        RECORDED_WITHIN,
      );

      const replay = await t
        .http()
        .post(`/api/v1/webhooks/${hook.uuid}/replay`)
        .set(...bearer(owner.accessToken))
        .send({ from: new Date(Date.now() - 3_600_000).toISOString(), status: 'delivered' })
        .expect(200);
      expect(replay.body.data).toEqual({ queued: 1 });
      await receiver.waitFor(() => receiver.to('/sample').length === 3);
      const tooWide = await t
        .http()
        .post(`/api/v1/webhooks/${hook.uuid}/replay`)
        .set(...bearer(owner.accessToken))
        .send({ from: '2026-01-01', to: '2026-01-09' });
      expectFailure(tooWide.body, 400, 'The replay window is at most 7 days');
    });

    it('signs with the old secret beside the new one for a day after a rotation', async () => {
      const { owner } = await ownerWithCompany(t);
      const hook = await addWebhook(t, owner, { url: receiver.url('/rotated') });
      const rotated = await t
        .http()
        .post(`/api/v1/webhooks/${hook.uuid}/rotate-secret`)
        .set(...bearer(owner.accessToken))
        .expect(200);
      const secret = rotated.body.data.secret as string;
      expect(secret).not.toBe(hook.secret);
      await t
        .http()
        .post(`/api/v1/webhooks/${hook.uuid}/test`)
        .set(...bearer(owner.accessToken))
        .send({})
        .expect(200);
      await receiver.waitFor(() => receiver.to('/rotated').length === 1);
      const [request] = receiver.to('/rotated');
      expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
      expect(verified(request, secret)).toEqual(request.json);
      expect(verified(request, hook.secret)).toEqual(request.json);
    });
  });

  it('refuses URLs that reach inside when private targets are not allowed', async () => {
    const strict = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: undefined } });
    try {
      const { owner } = await ownerWithCompany(strict);
      for (const url of [
        'http://127.0.0.1/x',
        'http://10.0.0.1/x',
        'http://169.254.169.254/latest/meta-data',
        'http://[::1]/x',
        'http://[::ffff:127.0.0.1]/x',
        'http://localhost/x',
      ]) {
        const res = await strict
          .http()
          .post('/api/v1/webhooks')
          .set(...bearer(owner.accessToken))
          .send({ url, events: ['*'] });
        expect([url, res.status]).toEqual([url, 400]);
      }
      expect(await strict.dataSource.getRepository(Webhook).count()).toBe(0);
    } finally {
      await strict.close();
    }
  });

  it('delivers what a process committed before it died, once another starts', async () => {
    const database: FreshDatabase = await freshDatabase();
    const first = await createTestApp({ database, env: { ...ENV, WEBHOOK_DISPATCHER: 'false' } });
    let second: TestApp | undefined;
    try {
      const { owner, company } = await ownerWithCompany(first);
      await addWebhook(first, owner, { url: receiver.url('/after-restart'), events: ['email.sent'] });
      await postLogs(
        first,
        messageLines(company.relayUsername, 'FF1000001A', 'f@example.net', 'sent'),
      ).expect(200);
      expect(await first.dataSource.getRepository(WebhookDelivery).countBy({ status: 'pending' })).toBe(1);
      await first.close();
      second = await createTestApp({ database, env: ENV });
      await receiver.waitFor(() => receiver.to('/after-restart').length === 1);
    } finally {
      await second?.close();
      await database.drop();
    }
  });

  // platform.md: on PostgreSQL replicas share the queue, each attempt made once; on the embedded
  // database one process dispatches (two on one SQLite file sent one delivery twice in 60 here).
  const onPostgres = process.env.DATABASE_URL ? it : it.skip;
  onPostgres('makes each attempt once with two processes on one PostgreSQL database', async () => {
    const database: FreshDatabase = await freshDatabase();
    const one = await createTestApp({ database, env: { ...ENV, WEBHOOK_DISPATCHER: 'false' } });
    let two: TestApp | undefined;
    let three: TestApp | undefined;
    try {
      const { owner, company } = await ownerWithCompany(one);
      await addWebhook(one, owner, { url: receiver.url('/shared'), events: ['email.sent'] });
      const lines: string[] = [];
      for (let i = 0; i < 60; i++) {
        lines.push(
          ...messageLines(company.relayUsername, `AB${String(100000 + i)}C`, `r${i}@example.net`, 'sent'),
        );
      }
      await postLogs(one, lines).expect(200);
      two = await createTestApp({ database, env: ENV });
      three = await createTestApp({ database, env: ENV });
      await receiver.waitFor(() => receiver.to('/shared').length >= 60);
      const deliveries = one.dataSource.getRepository(WebhookDelivery);
      await until(
        async () => (await deliveries.countBy({ status: 'delivered' })) === 60,
        'every delivery is recorded',
        RECORDED_WITHIN,
      );
      expect(await deliveries.countBy({ attempts: 1 })).toBe(60);
      expect(await countRows(one, 'webhook_attempts')).toBe(60);
      const ids = receiver.to('/shared').map((r) => r.headers['webhook-id']);
      expect(new Set(ids).size).toBe(60);
      expect(ids).toHaveLength(60);
    } finally {
      await two?.close();
      await three?.close();
      await one.close();
      await database.drop();
    }
  });
});
