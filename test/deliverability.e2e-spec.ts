import { IsNull } from 'typeorm';
import { Admin } from '../src/modules/admins/entities/admin.entity';
import { Company } from '../src/modules/companies/entities/company.entity';
import { User } from '../src/modules/users/entities/user.entity';
import { DeliverabilityAlertsService } from '../src/modules/deliverability/deliverability-alerts.service';
import { DeliverabilityAlert } from '../src/modules/deliverability/entities/deliverability-alert.entity';
import { DeliverabilityHour } from '../src/modules/deliverability/entities/deliverability-hour.entity';
import { CleanLog } from '../src/modules/log-index/entities/clean-log.entity';
import { Notification } from '../src/modules/notifications/entities/notification.entity';
import { SuppressionEntry } from '../src/modules/suppression/entities/suppression-entry.entity';
import {
  bearer,
  createActiveUser,
  createAdmin,
  CreatedAdmin,
  expectFailure,
  LoggedIn,
  RegisteredUser,
} from './support/factories';
import { createTestApp, TestApp } from './support/test-app';
import { WebhookReceiver } from './support/webhook-receiver';

const LOG_KEY = 'log-shipper-key-for-deliverability-tests-0123';
const PROVIDER_USER = 'provider-hooks';
const PROVIDER_PASSWORD = 'provider-hooks-password-0123456789';
const HOUR = 3_600_000;
jest.setTimeout(120_000);

type Owner = RegisteredUser & LoggedIn;
/** An item of a JSON answer, read loosely. */
type Item = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const GMAIL_MX = 'gmail-smtp-in.l.google.com[142.250.4.27]:25';
const M365_MX = 'contoso-example.mail.protection.outlook.com[52.101.40.1]:25';
const OTHER_MX = 'mx.example.net[192.0.2.7]:25';

/** Gmail's replies as Postfix logs them (multi-line replies joined). */
const GMAIL_NO_SUCH_USER =
  `host ${GMAIL_MX.replace(':25', '')} said: 550-5.1.1 The email account that you tried to reach does not exist. ` +
  "Please try 550-5.1.1 double-checking the recipient's email address for typos or 550-5.1.1 unnecessary spaces. " +
  'For more information, go to 550 5.1.1  https://support.google.com/mail/?p=NoSuchUser a1si1 - gsmtp (in reply to RCPT TO command)';
const GMAIL_UNAUTHENTICATED =
  `host ${GMAIL_MX.replace(':25', '')} said: 550-5.7.26 This mail has been blocked because the sender is ` +
  'unauthenticated. Gmail requires all senders to authenticate with either SPF or DKIM. 550-5.7.26  550-5.7.26 ' +
  ' Authentication results: 550-5.7.26  DKIM = did not pass 550-5.7.26  SPF [acme.test] with ip: [192.0.2.1] = did not ' +
  'pass 550-5.7.26  550-5.7.26  For instructions on setting up authentication, go to 550 5.7.26  ' +
  'https://support.google.com/mail/answer/81126#authentication a2si2 - gsmtp (in reply to end of DATA command)';
const GMAIL_OK = '250 2.0.0 OK  1700000000 a3si3 - gsmtp';
const GREYLISTED = `host mx.example.net[192.0.2.7] said: 450 4.2.0 <x@example.net>: Recipient address rejected: Greylisted (in reply to RCPT TO command)`;

interface Outcome {
  to: string;
  relay: string;
  dsn: string;
  status: 'sent' | 'deferred' | 'bounced';
  reply: string;
}

let queueSeq = 0x100000;
const nextQueueId = () => `D${(queueSeq++).toString(16).toUpperCase().padStart(9, '0')}`;

/** Postfix lines of one message of `relayUsername`, at `at` (ISO timestamps, as a shipper may send them). */
function messageLines(relayUsername: string, at: Date, o: Outcome): string[] {
  const q = nextQueueId();
  const ts = at.toISOString();
  return [
    `${ts} relay1 postfix/smtpd[22590]: ${q}: client=host.example[192.0.2.50], sasl_method=PLAIN, sasl_username=${relayUsername}`,
    `${ts} relay1 postfix/cleanup[22599]: ${q}: message-id=<${q}@acme.test>`,
    `${ts} relay1 postfix/qmgr[15878]: ${q}: from=<news@acme.test>, size=920, nrcpt=1 (queue active)`,
    `${ts} relay1 postfix/smtp[301]: ${q}: to=<${o.to}>, relay=${o.relay}, delay=5, delays=1/0/2/2, dsn=${o.dsn}, status=${o.status} (${o.reply})`,
  ];
}

describe('Deliverability (deliverability.md)', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let admin: CreatedAdmin;
  const today = new Date().toISOString().slice(0, 10);
  // From yesterday: the records are an hour old, and between 00:00 and 01:00 UTC that is yesterday.
  const yesterday = new Date(Date.now() - 24 * HOUR).toISOString().slice(0, 10);
  const window = `from=${yesterday}&to=${today}`;

  const postLogs = (lines: string[]) =>
    t
      .http()
      .post('/api/v1/callback-raw-log')
      .set('x-api-key', LOG_KEY)
      .set('content-type', 'text/plain')
      .send(lines.join('\n'))
      .expect(200);

  async function customer(): Promise<{ owner: Owner; company: Company }> {
    const owner = await createActiveUser(t);
    const company = await t.dataSource.getRepository(Company).findOneByOrFail({ uuid: owner.companyUuid });
    return { owner, company };
  }

  async function subscribe(owner: Owner, path: string): Promise<void> {
    const res = await t
      .http()
      .post('/api/v1/webhooks')
      .set(...bearer(owner.accessToken))
      .send({ url: receiver.url(path), events: ['*'] });
    expect(res.status).toBe(201);
  }

  const get = (token: string, path: string) =>
    t
      .http()
      .get(path)
      .set(...bearer(token));

  beforeAll(async () => {
    receiver = new WebhookReceiver();
    await receiver.start();
    t = await createTestApp({
      env: {
        LOG_SHIPPER_API_KEY: LOG_KEY,
        LOG_TIMEZONE: 'UTC',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        MAIL_PROVIDER_WEBHOOK_USER: PROVIDER_USER,
        MAIL_PROVIDER_WEBHOOK_PASSWORD: PROVIDER_PASSWORD,
      },
    });
    admin = await createAdmin(t, 'superAdmin');
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  describe('shipped log lines make records with a bounce class and a mailbox provider', () => {
    let acme: { owner: Owner; company: Company };
    const at = new Date(Date.now() - HOUR);

    beforeAll(async () => {
      acme = await customer();
      await subscribe(acme.owner, '/acme');
      const user = acme.company.relayUsername;
      await postLogs([
        ...messageLines(user, at, {
          to: 'jo@gmail.com',
          relay: GMAIL_MX,
          dsn: '5.1.1',
          status: 'bounced',
          reply: GMAIL_NO_SUCH_USER,
        }),
        ...messageLines(user, at, {
          to: 'ann@gmail.com',
          relay: GMAIL_MX,
          dsn: '5.7.26',
          status: 'bounced',
          reply: GMAIL_UNAUTHENTICATED,
        }),
        ...messageLines(user, at, {
          to: 'bo@contoso.example',
          relay: M365_MX,
          dsn: '2.0.0',
          status: 'sent',
          reply: '250 2.6.0 Queued mail for delivery',
        }),
        ...messageLines(user, at, {
          to: 'x@example.net',
          relay: OTHER_MX,
          dsn: '4.2.0',
          status: 'deferred',
          reply: GREYLISTED,
        }),
      ]);
    });

    const logs = async (query = '') => {
      const res = await get(acme.owner.accessToken, `/api/v1/reports/logs?${window}${query}`);
      expect(res.status).toBe(200);
      return res.body.data.items as Item[];
    };

    it('GET /reports/logs shows each record’s provider and bounce', async () => {
      const items = await logs();
      const byTo = new Map(items.map((i) => [i.to, i]));
      expect(byTo.size).toBe(4);
      expect(byTo.get('jo@gmail.com')).toMatchObject({
        status: 'bounced',
        provider: 'gmail',
        bounce: { type: 'hard', category: 'unknown-recipient', rule: expect.any(String) },
      });
      expect(byTo.get('ann@gmail.com')).toMatchObject({
        status: 'bounced',
        provider: 'gmail',
        bounce: { type: 'block', category: 'authentication', rule: expect.any(String) },
      });
      // A custom domain hosted by Microsoft 365: by the next hop.
      expect(byTo.get('bo@contoso.example')).toMatchObject({
        status: 'sent',
        provider: 'microsoft',
        bounce: null,
      });
      expect(byTo.get('x@example.net')).toMatchObject({
        status: 'deferred',
        provider: 'other',
        bounce: { type: 'soft' },
      });
      // As stored: the same values in the table.
      const stored = await t.dataSource
        .getRepository(CleanLog)
        .findOneByOrFail({ companyId: acme.company.id, to: 'ann@gmail.com' });
      expect([stored.provider, stored.bounceType, stored.bounceCategory, stored.bounceRule]).toEqual([
        'gmail',
        'block',
        'authentication',
        byTo.get('ann@gmail.com')!.bounce.rule,
      ]);
    });

    it('filters the logs by provider and category; a bad one is a 400', async () => {
      expect((await logs('&provider=gmail')).map((i) => i.to).sort()).toEqual([
        'ann@gmail.com',
        'jo@gmail.com',
      ]);
      expect((await logs('&provider=gmail&category=authentication')).map((i) => i.to)).toEqual([
        'ann@gmail.com',
      ]);
      expect(await logs('&provider=microsoft&category=authentication')).toEqual([]);
      for (const bad of ['provider=hotmail', 'category=spam']) {
        const res = await get(acme.owner.accessToken, `/api/v1/reports/logs?${window}&${bad}`);
        expect([bad, res.status]).toEqual([bad, 400]);
        expectFailure(res.body, 400);
      }
    });

    it('the CSV export carries the provider and the bounce class', async () => {
      const res = await get(acme.owner.accessToken, `/api/v1/reports/logs/export?${window}&provider=gmail`);
      expect(res.status).toBe(200);
      const [header, ...rows] = res.text.trim().split('\n');
      expect(header.split(',').slice(-4)).toEqual([
        'provider',
        'bounce_type',
        'bounce_category',
        'bounce_rule',
      ]);
      const ann = rows.find((r) => r.includes('ann@gmail.com'))!;
      expect(ann).toMatch(/,gmail,block,authentication,[a-z0-9.-]+$/);
    });

    it('a hard bounce suppresses its recipient; a Gmail 5.7.26 block does not', async () => {
      const entries = await t.dataSource
        .getRepository(SuppressionEntry)
        .findBy({ companyId: acme.company.id });
      expect(entries.map((e) => [e.email, e.reason, e.source])).toEqual([
        ['jo@gmail.com', 'hard_bounce', 'log'],
      ]);
    });

    it('email.bounced carries the bounce class and the provider', async () => {
      await receiver.waitFor(
        () => receiver.to('/acme').filter((r) => r.json.type === 'email.bounced').length >= 2,
      );
      const bounced = receiver
        .to('/acme')
        .filter((r) => r.json.type === 'email.bounced')
        .map((r) => r.json.data)
        .sort((a, b) => String(a.to).localeCompare(String(b.to)));
      expect(bounced).toEqual([
        expect.objectContaining({
          to: 'ann@gmail.com',
          provider: 'gmail',
          bounce: expect.objectContaining({ type: 'block', category: 'authentication' }),
        }),
        expect.objectContaining({
          to: 'jo@gmail.com',
          provider: 'gmail',
          bounce: expect.objectContaining({ type: 'hard', category: 'unknown-recipient' }),
        }),
      ]);
    });

    it('GET /reports/providers counts each provider’s outcomes and rates', async () => {
      const res = await get(acme.owner.accessToken, `/api/v1/reports/providers?${window}`);
      expect([res.status, res.body.msg]).toEqual([200, 'Provider report fetched']);
      const items = res.body.data.items as Item[];
      expect(items.map((i) => i.provider)).toEqual(['gmail', 'microsoft', 'yahoo', 'apple', 'other']);
      expect(items[0]).toEqual({
        provider: 'gmail',
        sent: 0,
        delivered: 0,
        deferred: 0,
        bounced: { hard: 1, soft: 0, block: 1 },
        complained: 0,
        bounceRate: 1,
        complaintRate: 0,
        topCategories: expect.arrayContaining([
          { category: 'authentication', count: 1 },
          { category: 'unknown-recipient', count: 1 },
        ]),
      });
      expect(items[1]).toMatchObject({
        provider: 'microsoft',
        sent: 1,
        bounced: { hard: 0, soft: 0, block: 0 },
        bounceRate: 0,
      });
      expect(items[4]).toMatchObject({ provider: 'other', sent: 0, deferred: 1, bounceRate: 0 });
      // Another sender domain has none of it.
      const other = await get(
        acme.owner.accessToken,
        `/api/v1/reports/providers?${window}&domain=elsewhere.test`,
      );
      expect(
        other.body.data.items.every((i: Record<string, number>) => i.sent === 0 && i.deferred === 0),
      ).toBe(true);
    });

    it('GET /reports/bounce-categories counts by category with a sample reply and rule', async () => {
      const res = await get(
        acme.owner.accessToken,
        `/api/v1/reports/bounce-categories?${window}&provider=gmail`,
      );
      expect(res.status).toBe(200);
      const items = res.body.data.items as Item[];
      const records = new Map((await logs('&provider=gmail')).map((i) => [i.bounce.category, i]));
      expect(items.sort((a, b) => a.category.localeCompare(b.category))).toEqual([
        {
          category: 'authentication',
          type: 'block',
          count: 1,
          sample: {
            rule: records.get('authentication')!.bounce.rule,
            response: GMAIL_UNAUTHENTICATED.slice(0, 500),
          },
        },
        {
          category: 'unknown-recipient',
          type: 'hard',
          count: 1,
          sample: { rule: records.get('unknown-recipient')!.bounce.rule, response: GMAIL_NO_SUCH_USER },
        },
      ]);
    });

    it('admins see every company’s, or one company’s; a user may not', async () => {
      const one = await get(
        admin.accessToken,
        `/api/v1/admins/reports/providers?${window}&companyUuid=${acme.company.uuid}`,
      );
      expect(one.status).toBe(200);
      expect(one.body.data.items[0].bounced).toEqual({ hard: 1, soft: 0, block: 1 });
      const all = await get(admin.accessToken, `/api/v1/admins/reports/bounce-categories?${window}`);
      expect(all.status).toBe(200);
      expect(
        all.body.data.items.find((i: { category: string }) => i.category === 'authentication').count,
      ).toBeGreaterThanOrEqual(1);
      const unknown = await get(
        admin.accessToken,
        `/api/v1/admins/reports/alerts?companyUuid=5f0c6f1e-8d3a-4a57-9a43-1b2c3d4e5f61`,
      );
      expect(unknown.status).toBe(404);
      expect((await get(acme.owner.accessToken, `/api/v1/admins/reports/providers?${window}`)).status).toBe(
        403,
      );
    });
  });

  describe('alerts', () => {
    let shop: { owner: Owner; company: Company };
    const sentAt = new Date(Date.now() - 30 * 60_000);
    const alerts = {
      service: () => t.app.get(DeliverabilityAlertsService),
      rows: () => t.dataSource.getRepository(DeliverabilityAlert).findBy({ companyId: shop.company.id }),
      notifications: async () => {
        const owner = await t.dataSource.getRepository(User).findOneByOrFail({ uuid: shop.owner.userUuid });
        return t.dataSource
          .getRepository(Notification)
          .findBy({ userId: owner.id, type: 'deliverability.alert' });
      },
    };

    beforeAll(async () => {
      shop = await customer();
      await subscribe(shop.owner, '/shop');
      const user = shop.company.relayUsername;
      const lines: string[] = [];
      for (let i = 0; i < 120; i++) {
        lines.push(
          ...messageLines(
            user,
            sentAt,
            i < 12
              ? {
                  to: `r${i}@gmail.com`,
                  relay: GMAIL_MX,
                  dsn: '5.7.26',
                  status: 'bounced',
                  reply: GMAIL_UNAUTHENTICATED,
                }
              : { to: `r${i}@gmail.com`, relay: GMAIL_MX, dsn: '2.0.0', status: 'sent', reply: GMAIL_OK },
          ),
        );
      }
      await postLogs(lines);
    });

    it('120 messages to Gmail with 12 authentication blocks: after the job, an open critical `blocked` alert', async () => {
      const run = await get(admin.accessToken, '/api/v1/t3st-job?job=deliverability-alerts');
      expect(run.status).toBe(200);
      expect(run.body.data.items).toEqual([
        expect.objectContaining({ job: 'deliverability-alerts', ok: true }),
      ]);
      expect(run.body.data.items[0].affected).toBeGreaterThanOrEqual(1);

      const res = await get(shop.owner.accessToken, '/api/v1/reports/alerts?state=open');
      expect([res.status, res.body.msg]).toEqual([200, 'Alerts fetched']);
      expect(res.body.data.items).toEqual([
        {
          uuid: expect.any(String),
          companyUuid: shop.company.uuid,
          provider: 'gmail',
          kind: 'blocked',
          level: 'critical',
          value: 0.1,
          threshold: 0.05,
          openedAt: expect.any(String),
          resolvedAt: null,
          // Samples keep the reply's first 500 characters.
          sample: { response: GMAIL_UNAUTHENTICATED.slice(0, 500), rule: expect.any(String) },
        },
      ]);
      const [alert] = res.body.data.items;

      // The owner is told (and e-mailed: critical), the admins too, and the webhook event goes out.
      const told = await alerts.notifications();
      expect(told.map((n) => [n.type, n.data])).toEqual([
        [
          'deliverability.alert',
          { alertUuid: alert.uuid, provider: 'gmail', kind: 'blocked', level: 'critical' },
        ],
      ]);
      await t.smtp.waitFor(shop.owner.email, /critical/i);
      const adminRow = await t.dataSource.getRepository(Admin).findOneByOrFail({ uuid: admin.uuid });
      expect(
        await t.dataSource
          .getRepository(Notification)
          .countBy({ adminId: adminRow.id, type: 'deliverability.alert' }),
      ).toBe(1);
      await receiver.waitFor(() => receiver.to('/shop').some((r) => r.json.type === 'deliverability.alert'));
      const event = receiver.to('/shop').find((r) => r.json.type === 'deliverability.alert')!;
      expect(event.json.data).toMatchObject({
        uuid: alert.uuid,
        kind: 'blocked',
        level: 'critical',
        provider: 'gmail',
      });

      // The same run again opens nothing new and tells nobody again.
      await get(admin.accessToken, '/api/v1/t3st-job?job=deliverability-alerts').expect(200);
      expect(await alerts.rows()).toHaveLength(1);
      expect(await alerts.notifications()).toHaveLength(1);
    });

    it('stays open while the blocks are recent, and resolves after 24 hours below the threshold (the clock moved)', async () => {
      const service = alerts.service();
      const base = sentAt.getTime() + HOUR;
      await service.evaluate(new Date(base + 12 * HOUR));
      let [alert] = await alerts.rows();
      expect([alert.resolvedAt, alert.lastAboveAt.getTime()]).toEqual([null, base + 12 * HOUR]);
      // 25 hours on, the blocks left the 24-hour window: below since the last reading above, 13 hours ago.
      await service.evaluate(new Date(base + 25 * HOUR));
      [alert] = await alerts.rows();
      expect([alert.resolvedAt, alert.value]).toEqual([null, 0]);
      await service.evaluate(new Date(base + 37 * HOUR));
      [alert] = await alerts.rows();
      expect(alert.resolvedAt?.getTime()).toBe(base + 37 * HOUR);
      const open = await get(shop.owner.accessToken, '/api/v1/reports/alerts?state=open');
      expect(open.body.data.items).toEqual([]);
      const resolved = await get(shop.owner.accessToken, '/api/v1/reports/alerts?state=resolved');
      expect(resolved.body.data.items.map((a: { uuid: string }) => a.uuid)).toEqual([alert.uuid]);
      expect(await alerts.notifications()).toHaveLength(1);
      const listed = await get(
        admin.accessToken,
        `/api/v1/admins/reports/alerts?companyUuid=${shop.company.uuid}`,
      );
      expect(listed.body.data.items.map((a: { uuid: string }) => a.uuid)).toEqual([alert.uuid]);
      const bad = await get(shop.owner.accessToken, '/api/v1/reports/alerts?state=closed');
      expect(bad.status).toBe(400);
    });
  });

  it('a hard-bounce rate rising from warning to critical updates the one alert and tells the owners again', async () => {
    const { owner, company } = await customer();
    const user = await t.dataSource.getRepository(User).findOneByOrFail({ uuid: owner.userUuid });
    const at = new Date(Date.now() - 2 * HOUR);
    const send = (from: number, count: number, hard: number) =>
      postLogs(
        Array.from({ length: count }, (_, i) => i + from).flatMap((i) =>
          messageLines(
            company.relayUsername,
            at,
            i - from < hard
              ? {
                  to: `h${i}@yahoo.com`,
                  relay: OTHER_MX,
                  dsn: '5.1.1',
                  status: 'bounced',
                  reply: '550 5.1.1 <x>: user unknown',
                }
              : {
                  to: `h${i}@yahoo.com`,
                  relay: OTHER_MX,
                  dsn: '2.0.0',
                  status: 'sent',
                  reply: '250 2.0.0 Ok',
                },
          ),
        ),
      );
    const service = t.app.get(DeliverabilityAlertsService);
    const alertsOf = () => t.dataSource.getRepository(DeliverabilityAlert).findBy({ companyId: company.id });
    const told = () =>
      t.dataSource.getRepository(Notification).findBy({ userId: user.id, type: 'deliverability.alert' });

    await send(0, 100, 3); // 3 % hard bounces at Yahoo: a warning
    await service.evaluate();
    expect((await alertsOf()).map((a) => [a.provider, a.kind, a.level, a.value])).toEqual([
      ['yahoo', 'hard-bounce-rate', 'warning', 0.03],
    ]);
    expect((await told()).map((n) => n.data?.level)).toEqual(['warning']);
    await service.evaluate();
    expect(await told()).toHaveLength(1);

    await send(100, 100, 9); // 12 of 200: 6 %, critical
    await service.evaluate();
    const [alert] = await alertsOf();
    expect([alert.level, alert.value, alert.threshold, alert.resolvedAt]).toEqual([
      'critical',
      0.06,
      0.05,
      null,
    ]);
    expect(await alertsOf()).toHaveLength(1);
    expect((await told()).map((n) => n.data?.level).sort()).toEqual(['critical', 'warning']);
  });

  it('a provider’s bounce: its own hard or soft when no rule knows the reply; a blocklist refusal stays a block and suppresses nobody', async () => {
    const { company } = await customer();
    const relay = 'smtp.sparkpostmail.com[52.1.1.1]:587';
    const lines = ['SPX-1', 'SPX-2'].flatMap((id, n) =>
      messageLines(company.relayUsername, new Date(Date.now() - HOUR), {
        to: `p${n}@example.org`,
        relay,
        dsn: '2.0.0',
        status: 'sent',
        reply: `250 2.0.0 Ok: queued as ${id}`,
      }),
    );
    await postLogs(lines);
    const bounce = (id: string, to: string, bounceClass: string, reason: string) => ({
      msys: {
        message_event: {
          type: 'bounce',
          event_id: `ev-${id}`,
          message_id: id,
          rcpt_to: to,
          timestamp: String(Math.floor(Date.now() / 1000)),
          bounce_class: bounceClass,
          raw_reason: reason,
        },
      },
    });
    const res = await t
      .http()
      .post('/callback/mail-provider')
      .auth(PROVIDER_USER, PROVIDER_PASSWORD)
      .send([
        bounce(
          'SPX-1',
          'p0@example.org',
          '10',
          'smtp; 550 Requested action not taken: mailbox name not allowed',
        ),
        bounce(
          'SPX-2',
          'p1@example.org',
          '10',
          '554 5.7.1 Service unavailable; Client host [52.1.1.1] blocked using zen.spamhaus.org',
        ),
      ]);
    expect([res.status, res.body.data]).toEqual([200, { accepted: 2, duplicates: 0, skipped: 0 }]);
    const records = await t.dataSource.getRepository(CleanLog).findBy({ companyId: company.id });
    expect(
      records
        .map((r) => [r.to, r.status, r.bounceType, r.bounceCategory])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    ).toEqual([
      ['p0@example.org', 'bounced', 'hard', 'other'],
      ['p1@example.org', 'bounced', 'block', 'reputation'],
    ]);
    const entries = await t.dataSource.getRepository(SuppressionEntry).findBy({ companyId: company.id });
    expect(entries.map((e) => [e.email, e.reason, e.source])).toEqual([
      ['p0@example.org', 'hard_bounce', 'mail_provider'],
    ]);
  });

  it('records built before deliverability existed are classified by the job, once, and counted', async () => {
    const { owner, company } = await customer();
    const at = new Date(Date.now() - 2 * HOUR);
    await postLogs(
      messageLines(company.relayUsername, at, {
        to: 'old@gmail.com',
        relay: GMAIL_MX,
        dsn: '5.1.1',
        status: 'bounced',
        reply: GMAIL_NO_SUCH_USER,
      }),
    );
    const logs = t.dataSource.getRepository(CleanLog);
    const record = await logs.findOneByOrFail({ companyId: company.id });
    // As a record of an older version was stored: no provider, no class, in no roll-up cell.
    await logs.update(
      { id: record.id },
      { provider: null, bounceType: null, bounceCategory: null, bounceRule: null },
    );
    await t.dataSource.getRepository(DeliverabilityHour).delete({ companyId: company.id });

    const classified = await t.app.get(DeliverabilityAlertsService).classifyBuiltBefore();
    expect(classified).toBeGreaterThanOrEqual(1);
    expect(await logs.findOneByOrFail({ id: record.id })).toMatchObject({
      provider: 'gmail',
      bounceType: 'hard',
      bounceCategory: 'unknown-recipient',
    });
    expect(await logs.countBy({ companyId: company.id, provider: IsNull() })).toBe(0);
    const report = async () =>
      (await get(owner.accessToken, `/api/v1/reports/providers?${window}`)).body.data.items[0].bounced;
    expect(await report()).toEqual({ hard: 1, soft: 0, block: 0 });
    // Again: nothing left to classify, nothing counted twice.
    await t.app.get(DeliverabilityAlertsService).classifyBuiltBefore();
    expect(await report()).toEqual({ hard: 1, soft: 0, block: 0 });
  });
});
