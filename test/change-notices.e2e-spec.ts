import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { dirname } from 'node:path';
import { ChangeNotices } from '../src/database/change-notices';
import { Company } from '../src/modules/companies/entities/company.entity';
import { RelayDecisionService } from '../src/modules/internal/relay-decision.service';
import { PolicyServerModule } from '../src/policy-server/policy-server.module';
import { TestDnsServer, splitTxt } from './support/dns-server';
import { bearer, createActiveUser, createAdmin } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const onPostgres = Boolean(process.env.DATABASE_URL);
const DAY = 86_400_000;
const SPF_INCLUDE = '_spf.relay.test';
const RETURN_PATH_HOST = 'rp.relay.test';

/**
 * What the API announces reaches the other processes on its database: the Postfix policy server
 * (here its application, on the API's PostgreSQL database or SQLite file) forgets a company or a
 * domain owner it cached when the API changes it, instead of at the cache's expiry (5 s).
 * PostgreSQL delivers notices by LISTEN; SQLite by the `change_notices` table, read when the
 * relay decision catches up.
 */
describe(`Change notices between processes (${onPostgres ? 'PostgreSQL' : 'SQLite'})`, () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let policy: INestApplicationContext;
  let decisions: RelayDecisionService;

  /** Another process on the test app's database: the policy server's application. */
  async function policyServerApp(): Promise<INestApplicationContext> {
    const database = onPostgres
      ? { DATABASE_URL: String((t.dataSource.options as { url: string }).url) }
      : { DATA_DIR: dirname(String(t.dataSource.options.database)) };
    const saved = { ...process.env };
    Object.assign(process.env, { NODE_ENV: 'test', LOG_LEVEL: 'silent', ...database });
    try {
      return await NestFactory.createApplicationContext(PolicyServerModule, { logger: false });
    } finally {
      process.env = saved;
    }
  }

  beforeAll(async () => {
    dns = new TestDnsServer();
    await dns.start();
    t = await createTestApp({
      env: { DNS_SERVERS: dns.address, SPF_INCLUDE, RETURN_PATH_PREFIX: 'bounce', RETURN_PATH_HOST },
    });
    policy = await policyServerApp();
    decisions = policy.get(RelayDecisionService);
  });
  afterAll(async () => {
    await policy?.close();
    await t?.close();
    await dns?.stop();
  });

  /** The decision of the policy server's process once it changes from `before`, or the last one after 2 s. */
  async function changedFrom(before: string, relayUsername: string, sender?: string): Promise<string> {
    let action = before;
    for (let waited = 0; action === before && waited < 2_000; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      action = (await decisions.decide({ relayUsername, sender, recipients: ['jo@example.net'] })).action;
    }
    return action;
  }

  /** Waits (catching up, as a decision does) until `heard` holds `count` notices, or 2 s. */
  async function hear(heard: unknown[], count: number, ...listeners: ChangeNotices[]): Promise<void> {
    for (let waited = 0; heard.length < count && waited < 2_000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      for (const notices of listeners) notices.catchUp();
    }
  }

  async function paidCompany() {
    const owner = await createActiveUser(t);
    const companies = t.dataSource.getRepository(Company);
    await companies.update(
      { uuid: owner.companyUuid },
      {
        packageUuid: '5f0c6f1e-8d3a-4a57-9a43-1b2c3d4e5f60',
        periodStart: new Date(Date.now() - DAY),
        periodEnd: new Date(Date.now() + 30 * DAY),
        quota: 100,
        used: 10,
      },
    );
    const { relayUsername } = await companies.findOneByOrFail({ uuid: owner.companyUuid });
    return { owner, relayUsername };
  }

  it('a suspension, a resumption and a quota change made through the API reach the policy server before its cache expires', async () => {
    const admin = await createAdmin(t, 'admin');
    const { owner, relayUsername } = await paidCompany();
    const patch = (body: object) =>
      t
        .http()
        .patch(`/api/v1/admins/companies/${owner.companyUuid}`)
        .set(...bearer(admin.accessToken))
        .send(body)
        .expect(200);

    // Cached by the policy server's process from here on.
    expect((await decisions.decide({ relayUsername })).action).toBe('OK');

    await patch({ status: 'suspended', suspendedReason: 'abuse report' });
    expect(await changedFrom('OK', relayUsername)).toBe('REJECT account suspended');

    await patch({ status: 'active' });
    expect(await changedFrom('REJECT account suspended', relayUsername)).toBe('OK');

    await patch({ quota: 10 });
    expect(await changedFrom('OK', relayUsername)).toBe('DEFER_IF_PERMIT quota exceeded');
  });

  it('a domain verified, then deleted, through the API reaches the policy server before its cache expires', async () => {
    const { owner, relayUsername } = await paidCompany();
    const as = bearer(owner.accessToken);
    const added = await t
      .http()
      .post('/api/v1/domains')
      .set(...as)
      .send({ name: 'notices.test' })
      .expect(201);
    const domain = added.body.data as {
      uuid: string;
      name: string;
      records: Array<{ purpose: string; host: string; value: string }>;
    };
    const at = (purpose: string) => domain.records.find((r) => r.purpose === purpose)!;
    dns.zone.set(domain.name, { txt: [[at('ownership').value], [at('spf').value]] });
    dns.zone.set(at('dkim').host, { txt: [splitTxt(at('dkim').value)] });
    dns.zone.set(at('dmarc').host, { txt: [['v=DMARC1; p=none;']] });
    dns.zone.set(at('return-path').host, { cname: `${RETURN_PATH_HOST}.` });
    const sender = 'news@notices.test';

    // The owner of the sender's domain (none yet) is cached by the policy server's process.
    const unverified = 'REJECT sender domain not verified';
    expect((await decisions.decide({ relayUsername, sender })).action).toBe(unverified);

    const verified = await t
      .http()
      .post(`/api/v1/domains/${domain.uuid}/verify`)
      .set(...as)
      .expect(200);
    expect(verified.body.data).toMatchObject({ status: 'verified' });
    expect(await changedFrom(unverified, relayUsername, sender)).toBe('OK');

    await t
      .http()
      .delete(`/api/v1/domains/${domain.uuid}`)
      .set(...as)
      .expect(200);
    expect(await changedFrom('OK', relayUsername, sender)).toBe(unverified);
  });

  it('an application does not hear its own notices, and a notice that is not JSON is ignored', async () => {
    const notices = t.app.get(ChangeNotices);
    const other = policy.get(ChangeNotices);
    const heard: unknown[] = [];
    notices.listen('relay_test_channel', (payload) => heard.push(['api', payload]));
    other.listen('relay_test_channel', (payload) => heard.push(['policy', payload]));
    await Promise.all([notices.listening(), other.listening()]);

    if (onPostgres) await t.dataSource.query("SELECT pg_notify('relay_test_channel', 'not json')");
    else {
      await t.dataSource.query(
        "INSERT INTO change_notices (channel, payload, sender) VALUES ('relay_test_channel', 'not json', 'another')",
      );
    }
    notices.publish('relay_test_channel', { n: 1 });
    other.publish('relay_test_channel', { n: 2 });
    await hear(heard, 2, notices, other);
    // The two notices heard, each by the other application; nothing else came meanwhile.
    notices.publish('relay_test_channel', { n: 'last' });
    await hear(heard, 3, notices, other);
    expect(heard).toHaveLength(3);
    expect(heard[2]).toEqual(['policy', { n: 'last' }]);
    expect(heard.slice(0, 2)).toEqual(
      expect.arrayContaining([
        ['policy', { n: 1 }],
        ['api', { n: 2 }],
      ]),
    );
  });

  it('a process hears nothing sent before it listened, then a burst of notices in the order sent', async () => {
    const notices = t.app.get(ChangeNotices);
    for (let n = 0; n < 5; n++) notices.publish('relay_test_burst', { n: `before ${n}` });
    await notices.sent();

    const late = await policyServerApp();
    try {
      const heard: unknown[] = [];
      const lateNotices = late.get(ChangeNotices);
      lateNotices.listen('relay_test_burst', (payload) => heard.push(payload));
      await lateNotices.listening();
      const sent = Array.from({ length: 200 }, (_, n) => ({ n }));
      for (const payload of sent) notices.publish('relay_test_burst', payload);
      await hear(heard, sent.length, lateNotices);
      expect(heard).toEqual(sent);
    } finally {
      await late.close();
    }
  });
});
