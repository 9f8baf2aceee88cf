import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ChangeNotices } from '../src/database/change-notices';
import { Company } from '../src/modules/companies/entities/company.entity';
import { RelayDecisionService } from '../src/modules/internal/relay-decision.service';
import { PolicyServerModule } from '../src/policy-server/policy-server.module';
import { bearer, createActiveUser, createAdmin } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;
const DAY = 86_400_000;

/**
 * What the API announces reaches the other processes on its PostgreSQL database: the Postfix
 * policy server (here its application, on the API's database) forgets a company or a domain
 * owner it cached when the API changes it, instead of at the cache's expiry (5 s).
 */
onPostgres('Change notices between processes (PostgreSQL runs)', () => {
  let t: TestApp;
  let policy: INestApplicationContext;
  let decisions: RelayDecisionService;

  beforeAll(async () => {
    t = await createTestApp();
    const saved = { ...process.env };
    Object.assign(process.env, {
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      DATABASE_URL: String((t.dataSource.options as { url: string }).url),
    });
    try {
      policy = await NestFactory.createApplicationContext(PolicyServerModule, { logger: false });
    } finally {
      process.env = saved;
    }
    decisions = policy.get(RelayDecisionService);
  });
  afterAll(async () => {
    await policy?.close();
    await t.close();
  });

  /** The decision of the policy server's process once it changes from `before`, or the last one after 2 s. */
  async function changedFrom(before: string, relayUsername: string): Promise<string> {
    let action = before;
    for (let waited = 0; action === before && waited < 2_000; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      action = (await decisions.decide({ relayUsername, recipients: ['jo@example.net'] })).action;
    }
    return action;
  }

  it('a suspension, a resumption and a quota change made through the API reach the policy server before its cache expires', async () => {
    const admin = await createAdmin(t, 'admin');
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

  it('an application does not hear its own notices, and a notice that is not JSON is ignored', async () => {
    const notices = t.app.get(ChangeNotices);
    const heard: unknown[] = [];
    notices.listen('relay_test_channel', (payload) => heard.push(payload));
    const other = policy.get(ChangeNotices);
    other.listen('relay_test_channel', (payload) => heard.push(['policy', payload]));
    await new Promise((resolve) => setTimeout(resolve, 200)); // both LISTEN connections up
    notices.publish('relay_test_channel', { n: 1 });
    await t.dataSource.query("SELECT pg_notify('relay_test_channel', 'not json')");
    for (let waited = 0; heard.length === 0 && waited < 2_000; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(heard).toEqual([['policy', { n: 1 }]]);
  });
});
