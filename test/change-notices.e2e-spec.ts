import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { dirname } from 'node:path';
import { ChangeNotices, LISTENER_APPLICATION_NAME } from '../src/database/change-notices';
import { Company } from '../src/modules/companies/entities/company.entity';
import { RelayDecisionService } from '../src/modules/internal/relay-decision.service';
import { PolicyServerModule } from '../src/relay-agent/policy/policy-server.module';
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
 * relay decision catches up. The tests wait for the notices themselves, never for time.
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

  /**
   * Runs `action` (an API call) and resolves once the policy server's process has heard the
   * notice it sends on `channel`: its cache (whose handler was there first) has forgotten by then.
   * On SQLite the notice is read at once by a catch-up, as a decision does (else by the catch-up
   * timer); on PostgreSQL it arrives by LISTEN.
   */
  async function heardAfter(channel: string, action: () => Promise<unknown>): Promise<void> {
    const policyNotices = policy.get(ChangeNotices);
    const heard = new Promise<void>((resolve) => {
      const stop = policyNotices.listen(channel, () => {
        stop();
        resolve();
      });
    });
    await action();
    await t.app.get(ChangeNotices).sent();
    policyNotices.catchUp();
    await heard;
  }

  async function decide(relayUsername: string, sender?: string): Promise<string> {
    return (await decisions.decide({ relayUsername, sender, recipients: ['jo@example.net'] })).action;
  }

  /** What listeners heard, in order; `count(n)` resolves once there are n. */
  function collector() {
    const heard: unknown[] = [];
    const waiting: Array<{ n: number; resolve: () => void }> = [];
    return {
      heard,
      push(entry: unknown) {
        heard.push(entry);
        for (const w of waiting.filter((w) => heard.length >= w.n)) w.resolve();
      },
      count(n: number): Promise<void> {
        return heard.length >= n ? Promise.resolve() : new Promise((resolve) => waiting.push({ n, resolve }));
      },
    };
  }

  /** Once the notices published so far are sent, the listeners read them (SQLite; PostgreSQL delivers by itself). */
  async function deliver(senders: ChangeNotices[], listeners: ChangeNotices[]): Promise<void> {
    for (const notices of senders) await notices.sent();
    for (const notices of listeners) notices.catchUp();
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

    const companyState = 'relay_company_state';

    // Cached by the policy server's process from here on.
    expect(await decide(relayUsername)).toBe('OK');

    await heardAfter(companyState, () => patch({ status: 'suspended', suspendedReason: 'abuse report' }));
    expect(await decide(relayUsername)).toBe('REJECT account suspended');

    await heardAfter(companyState, () => patch({ status: 'active' }));
    expect(await decide(relayUsername)).toBe('OK');

    await heardAfter(companyState, () => patch({ quota: 10 }));
    expect(await decide(relayUsername)).toBe('DEFER_IF_PERMIT quota exceeded');
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
    const domainOwner = 'relay_domain_owner';
    expect(await decide(relayUsername, sender)).toBe(unverified);

    await heardAfter(domainOwner, async () => {
      const verified = await t
        .http()
        .post(`/api/v1/domains/${domain.uuid}/verify`)
        .set(...as)
        .expect(200);
      expect(verified.body.data).toMatchObject({ status: 'verified' });
    });
    expect(await decide(relayUsername, sender)).toBe('OK');

    await heardAfter(domainOwner, () =>
      t
        .http()
        .delete(`/api/v1/domains/${domain.uuid}`)
        .set(...as)
        .expect(200),
    );
    expect(await decide(relayUsername, sender)).toBe(unverified);
  });

  it('an application does not hear its own notices, and a notice that is not JSON is ignored', async () => {
    const notices = t.app.get(ChangeNotices);
    const other = policy.get(ChangeNotices);
    const { heard, push, count } = collector();
    notices.listen('relay_test_channel', (payload) => push(['api', payload]));
    other.listen('relay_test_channel', (payload) => push(['policy', payload]));
    await Promise.all([notices.listening(), other.listening()]);

    if (onPostgres) await t.dataSource.query("SELECT pg_notify('relay_test_channel', 'not json')");
    else {
      await t.dataSource.query(
        "INSERT INTO change_notices (channel, payload, sender) VALUES ('relay_test_channel', 'not json', 'another')",
      );
    }
    notices.publish('relay_test_channel', { n: 1 });
    other.publish('relay_test_channel', { n: 2 });
    await deliver([notices, other], [notices, other]);
    await count(2);
    // The two notices heard, each by the other application; nothing else came meanwhile.
    notices.publish('relay_test_channel', { n: 'last' });
    await deliver([notices], [other]);
    await count(3);
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
      const { heard, push, count } = collector();
      const lateNotices = late.get(ChangeNotices);
      lateNotices.listen('relay_test_burst', push);
      await lateNotices.listening();
      const sent = Array.from({ length: 200 }, (_, n) => ({ n }));
      for (const payload of sent) notices.publish('relay_test_burst', payload);
      await deliver([notices], [lateNotices]);
      await count(sent.length);
      expect(heard).toEqual(sent);
    } finally {
      await late.close();
    }
  });

  (onPostgres ? it : it.skip)(
    'when its LISTEN connection is lost, the policy server listens again and forgets what it cached, changes of the gap included',
    async () => {
      const admin = await createAdmin(t, 'admin');
      const { owner, relayUsername } = await paidCompany();
      const companies = t.dataSource.getRepository(Company);
      expect(await decide(relayUsername)).toBe('OK');
      // A change no notice announces, as one made while the connection is down: the cache holds.
      await companies.update({ uuid: owner.companyUuid }, { quota: 10 });
      expect(await decide(relayUsername)).toBe('OK');

      const policyNotices = policy.get(ChangeNotices);
      const reconnected = new Promise<void>((resolve) => {
        const stop = policyNotices.onReconnect(() => {
          stop();
          resolve();
        });
      });
      const [{ ended }] = await t.dataSource.query<Array<{ ended: number }>>(
        'SELECT count(pg_terminate_backend(pid))::int AS ended FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()',
        [LISTENER_APPLICATION_NAME],
      );
      expect(ended).toBeGreaterThanOrEqual(1);
      await reconnected;
      await policyNotices.listening();

      expect(await decide(relayUsername)).toBe('DEFER_IF_PERMIT quota exceeded');
      // And it hears notices again.
      await heardAfter('relay_company_state', () =>
        t
          .http()
          .patch(`/api/v1/admins/companies/${owner.companyUuid}`)
          .set(...bearer(admin.accessToken))
          .send({ quota: 100 })
          .expect(200),
      );
      expect(await decide(relayUsername)).toBe('OK');
    },
  );
});
