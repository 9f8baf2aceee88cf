import { IsNull } from 'typeorm';
import { Company } from '../src/modules/companies/entities/company.entity';
import { CrmConnection } from '../src/modules/crm/entities/crm-connection.entity';
import { CrmOAuthState } from '../src/modules/crm/entities/crm-oauth-state.entity';
import { CrmOutboxEntry } from '../src/modules/crm/entities/crm-outbox-entry.entity';
import { CrmServer } from './support/crm-server';
import {
  bearer,
  countRows,
  createAdmin,
  CreatedAdmin,
  expectFailure,
  registerUser,
  RegisteredUser,
} from './support/factories';
import { createTestApp, freshDatabase, FreshDatabase, TestApp } from './support/test-app';

const CLIENT_ID = '1000.CLIENTIDFORTESTS';
const CLIENT_SECRET = 'crm-client-secret-for-tests';
const PUBLIC_URL = 'https://relay.example.test';

describe('CRM (/api/v1/auth-crm, /api/v1/get-token, admin crm-sync, the crm-sync job)', () => {
  let crm: CrmServer;
  let database: FreshDatabase;
  let t: TestApp;
  let superAdmin: CreatedAdmin;
  let admin: CreatedAdmin;

  const crmEnv = () => ({
    CRM_ACCOUNTS_URL: crm.url,
    CRM_CLIENT_ID: CLIENT_ID,
    CRM_CLIENT_SECRET: CLIENT_SECRET,
    CRM_TIMEOUT_MS: '400',
    PUBLIC_URL,
    // The same key in both processes of the restart test, as in production.
    ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
  });
  const authCrm = (who: { accessToken: string }) =>
    t
      .http()
      .get('/api/v1/auth-crm')
      .set(...bearer(who.accessToken));
  const getToken = (query: Record<string, string>) => t.http().get('/api/v1/get-token').query(query);
  const crmSync = (who: { accessToken: string }, uuid: string) =>
    t
      .http()
      .post(`/api/v1/admins/companies/${uuid}/crm-sync`)
      .set(...bearer(who.accessToken));
  const runJob = async () => {
    const res = await t
      .http()
      .get('/api/v1/t3st-job?job=crm-sync')
      .set(...bearer(superAdmin.accessToken))
      .expect(200);
    expect(res.body.data.items).toEqual([expect.objectContaining({ job: 'crm-sync', ok: true })]);
    return res.body.data.items[0].affected as number;
  };
  const outboxOf = async (companyUuid: string) => {
    const company = await t.dataSource.getRepository(Company).findOneByOrFail({ uuid: companyUuid });
    return {
      company,
      entry: await t.dataSource.getRepository(CrmOutboxEntry).findOneBy({ companyId: company.id }),
    };
  };
  const makeDue = () =>
    t.dataSource
      .getRepository(CrmOutboxEntry)
      .createQueryBuilder()
      .update()
      .set({ nextAttemptAt: new Date(0) })
      .where('synced_at IS NULL')
      .execute();
  const stateOf = (authorizationUrl: string) => new URL(authorizationUrl).searchParams.get('state')!;
  beforeAll(async () => {
    crm = new CrmServer(CLIENT_ID, CLIENT_SECRET);
    await crm.start();
    database = await freshDatabase();
    t = await createTestApp({ database, env: crmEnv() });
    superAdmin = await createAdmin(t, 'superAdmin');
    admin = await createAdmin(t, 'admin');
  });

  afterAll(async () => {
    await t?.close();
    await crm.stop();
    await database.drop();
  });

  describe('before the CRM is connected', () => {
    let early: RegisteredUser;

    it('a registration queues the company in the outbox and sends nothing', async () => {
      early = await registerUser(t);
      const { entry } = await outboxOf(early.companyUuid);
      expect(entry).toMatchObject({ attempts: 0, syncedAt: null, lastError: null });
      expect(crm.requests).toEqual([]);
    });

    it('admin crm-sync → 503 "CRM is not connected"', async () => {
      const res = await crmSync(admin, early.companyUuid).expect(503);
      expectFailure(res.body, 503, /CRM is not connected/);
    });

    it('the crm-sync job leaves the queue as it is', async () => {
      expect(await runJob()).toBe(0);
      expect((await outboxOf(early.companyUuid)).entry).toMatchObject({ attempts: 0, syncedAt: null });
    });
  });

  describe('connecting (OAuth 2.0 authorisation code)', () => {
    it('/auth-crm answers the authorisation URL of integrations.md with a signed state', async () => {
      const res = await authCrm(superAdmin).expect(200);
      expect(res.body).toMatchObject({ status: 'success', code: 200 });
      const url = new URL(res.body.data.authorizationUrl);
      expect(`${url.origin}${url.pathname}`).toBe(`${crm.url}/oauth/v2/auth`);
      expect(Object.fromEntries(url.searchParams)).toEqual({
        client_id: CLIENT_ID,
        response_type: 'code',
        redirect_uri: `${PUBLIC_URL}/api/v1/get-token`,
        scope: 'ZohoCRM.modules.accounts.ALL,ZohoCRM.modules.contacts.ALL',
        access_type: 'offline',
        prompt: 'consent',
        state: expect.stringMatching(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/),
      });
    });

    it('/auth-crm is the superAdmin’s: admin and accounting get 403', async () => {
      expectFailure((await authCrm(admin).expect(403)).body, 403);
      const accounting = await createAdmin(t, 'accounting');
      expectFailure((await authCrm(accounting).expect(403)).body, 403);
    });

    it.each([
      ['a made-up state', () => 'made.up'],
      ['no signature', (s: string) => s.split('.')[0]],
      [
        'a changed admin',
        (s: string) => {
          const [body, sig] = s.split('.');
          const payload = JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<string, unknown>;
          payload.a = '00000000-0000-4000-8000-000000000000';
          return `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${sig}`;
        },
      ],
      ['a flipped signature', (s: string) => `${s.slice(0, -1)}${s.endsWith('A') ? 'B' : 'A'}`],
    ])('/get-token with %s → 400 and no connection', async (_name, forge) => {
      const state = stateOf((await authCrm(superAdmin).expect(200)).body.data.authorizationUrl);
      const res = await getToken({ code: crm.issueCode(), state: forge(state) }).expect(400);
      expectFailure(res.body, 400, 'Invalid or expired state');
      expect(await countRows(t, 'crm_connections')).toBe(0);
    });

    it('/get-token with a state whose nonce has expired and been purged → 400', async () => {
      const state = stateOf((await authCrm(superAdmin).expect(200)).body.data.authorizationUrl);
      // Ten minutes later: the nonce row is past its expiry (the signed expiry is checked too).
      const [body] = state.split('.');
      const nonce = (JSON.parse(Buffer.from(body, 'base64url').toString()) as { n: string }).n;
      await t.dataSource
        .getRepository(CrmOAuthState)
        .update({ nonce }, { expiresAt: new Date(Date.now() - 1000) });
      await authCrm(superAdmin).expect(200); // purges expired states
      expect(await t.dataSource.getRepository(CrmOAuthState).existsBy({ nonce })).toBe(false);
      expectFailure(
        (await getToken({ code: crm.issueCode(), state }).expect(400)).body,
        400,
        'Invalid or expired state',
      );
    });

    it('/get-token without state, or with ?error= → 400', async () => {
      expectFailure((await getToken({ code: 'x' }).expect(400)).body, 400);
      const state = stateOf((await authCrm(superAdmin).expect(200)).body.data.authorizationUrl);
      const res = await getToken({ error: 'access_denied', state }).expect(400);
      expectFailure(res.body, 400, /access_denied/);
      expect(await countRows(t, 'crm_connections')).toBe(0);
    });

    it('/get-token with a code the CRM refuses → 400 naming its error', async () => {
      const state = stateOf((await authCrm(superAdmin).expect(200)).body.data.authorizationUrl);
      const res = await getToken({ code: 'not-a-code', state }).expect(400);
      expectFailure(res.body, 400, /invalid_code/);
    });

    it('/get-token exchanges the code, stores the tokens encrypted; the state cannot be used twice', async () => {
      const state = stateOf((await authCrm(superAdmin).expect(200)).body.data.authorizationUrl);
      const res = await getToken({ code: crm.issueCode(), state }).expect(200);
      expect(res.body).toMatchObject({ status: 'success', code: 200, msg: 'CRM connected' });
      expect(res.body.data).toEqual({ connected: true, provider: 'zoho', expiresAt: expect.any(String) });
      expect(new Date(res.body.data.expiresAt).getTime()).toBeGreaterThan(Date.now() + 3500_000);

      const [grant] = crm.tokenGrants('authorization_code').slice(-1);
      expect(grant.body).toMatchObject({
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uri: `${PUBLIC_URL}/api/v1/get-token`,
      });
      const row = await t.dataSource.getRepository(CrmConnection).findOneByOrFail({ id: 1 });
      expect(row).toMatchObject({
        provider: 'zoho',
        apiDomain: crm.url,
        connectedByAdminUuid: superAdmin.uuid,
      });
      expect(row.accessTokenCipher).toMatch(/^v1\./);
      expect(row.accessTokenCipher).not.toContain('1000.access');
      expect(row.refreshTokenCipher).not.toContain('1000.refresh');

      const again = await getToken({ code: crm.issueCode(), state }).expect(400);
      expectFailure(again.body, 400, 'Invalid or expired state');
    });
  });

  describe('syncing', () => {
    it('the queued company reaches the CRM with the next job run, once', async () => {
      const [queued] = await t.dataSource
        .getRepository(CrmOutboxEntry)
        .find({ where: { syncedAt: IsNull() } });
      expect(queued).toBeDefined();
      expect(await runJob()).toBeGreaterThanOrEqual(1);
      expect(await runJob()).toBe(0);
      expect(crm.accounts.size).toBe(1);
      expect([...crm.accounts.values()][0].writes).toBe(1);
    });

    it('a registration reaches the CRM once: an Account keyed by the company uuid and its owner Contact', async () => {
      const before = crm.upsertsOf('Accounts').length;
      const user = await registerUser(t);
      await t.settle();
      expect((await outboxOf(user.companyUuid)).entry?.syncedAt).toBeInstanceOf(Date);
      const { company } = await outboxOf(user.companyUuid);
      const account = crm.accounts.get(user.companyUuid)!;
      expect(account).toMatchObject({ writes: 1 });
      expect(account.fields).toMatchObject({
        Relay_Company_UUID: user.companyUuid,
        Account_Name: 'Acme Mail',
        Relay_Username: company.relayUsername,
        Billing_Country: 'ID',
      });
      expect(company.crmAccountId).toBe(account.id);
      const contact = crm.contacts.get(user.email)!;
      expect(contact.fields).toEqual({
        First_Name: 'Ada',
        Last_Name: 'Owner',
        Email: user.email,
        Phone: null,
        Account_Name: { id: account.id },
      });
      const upsert = crm.upsertsOf('Accounts')[before];
      expect(upsert.authorization).toMatch(/^Zoho-oauthtoken 1000\.access\./);
      expect(upsert.body.duplicate_check_fields).toEqual(['Relay_Company_UUID']);
      expect(await runJob()).toBe(0);
      expect(crm.upsertsOf('Accounts').length).toBe(before + 1);
    });

    it('across a CRM outage: queued with backoff, then sent once when it is back', async () => {
      crm.mode = { kind: 'fail', status: 500 };
      const user = await registerUser(t);
      await t.settle();
      expect((await outboxOf(user.companyUuid)).entry?.attempts).toBe(1);
      const { entry } = await outboxOf(user.companyUuid);
      expect(entry!.syncedAt).toBeNull();
      expect(entry!.lastError).toMatch(/HTTP 500/);
      expect(entry!.nextAttemptAt.getTime()).toBeGreaterThan(Date.now() + 50_000);
      expect(crm.accounts.has(user.companyUuid)).toBe(false);

      crm.mode = { kind: 'ok' };
      expect(await runJob()).toBe(0); // not due yet
      expect(crm.accounts.has(user.companyUuid)).toBe(false);

      await makeDue();
      expect(await runJob()).toBe(1);
      expect(crm.accounts.get(user.companyUuid)?.writes).toBe(1);
      expect((await outboxOf(user.companyUuid)).entry).toMatchObject({
        lastError: null,
        syncedAt: expect.any(Date),
      });
    });

    it('one record the CRM refuses fails alone; the others of the batch are synced', async () => {
      crm.mode = { kind: 'fail', status: 503 };
      const good = await registerUser(t);
      const bad = await registerUser(t);
      await t.dataSource.getRepository(Company).update({ uuid: bad.companyUuid }, { name: 'Refuse me' });
      await t.settle();
      expect((await outboxOf(bad.companyUuid)).entry?.attempts).toBe(1);
      expect((await outboxOf(good.companyUuid)).entry?.attempts).toBe(1);
      crm.mode = { kind: 'ok' };
      await makeDue();
      expect(await runJob()).toBe(1);
      expect(crm.accounts.get(good.companyUuid)?.writes).toBe(1);
      expect((await outboxOf(bad.companyUuid)).entry).toMatchObject({
        attempts: 2,
        syncedAt: null,
        lastError: 'Account: INVALID_DATA: invalid data',
      });
      await t.dataSource.getRepository(Company).update({ uuid: bad.companyUuid }, { name: 'Fixed Name' });
      await makeDue();
      expect(await runJob()).toBe(1);
    });

    it('sends at most 100 records per upsert call', async () => {
      const companies = t.dataSource.getRepository(Company);
      const created = await companies.save(
        Array.from({ length: 150 }, (_, i) =>
          companies.create({ name: `Bulk ${i}`, relayUsername: `r-bulk${String(i).padStart(4, '0')}` }),
        ),
      );
      await t.dataSource
        .getRepository(CrmOutboxEntry)
        .insert(created.map((c) => ({ companyId: c.id, nextAttemptAt: new Date(0) })));
      const before = crm.upsertsOf('Accounts').length;
      expect(await runJob()).toBe(150);
      const sizes = crm
        .upsertsOf('Accounts')
        .slice(before)
        .map((r) => (r.body.data as unknown[]).length);
      expect(sizes).toEqual([100, 50]);
      expect(created.every((c) => crm.accounts.get(c.uuid)?.writes === 1)).toBe(true);
    });

    it('refreshes the access token when the CRM refuses it, and within 60 s of its expiry', async () => {
      const user = await registerUser(t);
      await t.settle();
      expect((await outboxOf(user.companyUuid)).entry?.syncedAt).toBeInstanceOf(Date);

      crm.expireAccessTokens();
      const refreshesBefore = crm.tokenGrants('refresh_token').length;
      const res = await crmSync(admin, user.companyUuid).expect(200);
      expect(res.body).toMatchObject({
        msg: 'Company synced to the CRM',
        data: { crmAccountId: crm.accounts.get(user.companyUuid)!.id },
      });
      expect(crm.tokenGrants('refresh_token')).toHaveLength(refreshesBefore + 1);
      expect(crm.accounts.get(user.companyUuid)?.writes).toBe(2);

      await t.dataSource
        .getRepository(CrmConnection)
        .update({ id: 1 }, { expiresAt: new Date(Date.now() + 30_000) });
      await crmSync(superAdmin, user.companyUuid).expect(200);
      expect(crm.tokenGrants('refresh_token')).toHaveLength(refreshesBefore + 2);
      const row = await t.dataSource.getRepository(CrmConnection).findOneByOrFail({ id: 1 });
      expect(row.expiresAt.getTime()).toBeGreaterThan(Date.now() + 3500_000);
    });

    it('admin crm-sync: 400 bad uuid, 404 unknown company, 403 for accounting, 503 while the CRM is down', async () => {
      expectFailure((await crmSync(admin, 'not-a-uuid').expect(400)).body, 400);
      expectFailure((await crmSync(admin, '00000000-0000-4000-8000-000000000000').expect(404)).body, 404);
      const accounting = await createAdmin(t, 'accounting');
      const user = await registerUser(t);
      expectFailure((await crmSync(accounting, user.companyUuid).expect(403)).body, 403);
      await t.settle();
      expect((await outboxOf(user.companyUuid)).entry?.syncedAt).toBeInstanceOf(Date);
      crm.mode = { kind: 'stall' };
      const res = await crmSync(admin, user.companyUuid).expect(503);
      expectFailure(res.body, 503, /did not answer in time/);
      expect((await outboxOf(user.companyUuid)).entry).toMatchObject({ syncedAt: null, attempts: 1 });
      crm.mode = { kind: 'ok' };
      await makeDue();
      expect(await runJob()).toBe(1);
    });

    describe('a token answer the service cannot use: 502, and the stored connection stays as it was', () => {
      const unusable: Array<[string, Record<string, unknown>, RegExp]> = [
        ['expires_in 1e20', { expires_in: 1e20 }, /expires_in/],
        ['a negative expires_in', { expires_in: -5 }, /expires_in/],
        ['a fractional expires_in', { expires_in: 0.5 }, /expires_in/],
        ['a text expires_in', { expires_in: 'soon' }, /expires_in/],
        ['a number for access_token', { access_token: 12345 }, /access_token/],
        ['an ftp api_domain', { api_domain: 'ftp://crm.example' }, /api_domain/],
        ['an object for refresh_token', { refresh_token: { a: 1 } }, /refresh_token/],
      ];
      const stored = () => t.dataSource.getRepository(CrmConnection).findOneByOrFail({ id: 1 });
      afterEach(() => (crm.tokenAnswerOverride = null));

      it.each(unusable)('/get-token answered with %s', async (_name, override, problem) => {
        const before = await stored();
        crm.tokenAnswerOverride = override;
        const state = stateOf((await authCrm(superAdmin).expect(200)).body.data.authorizationUrl);
        const res = await getToken({ code: crm.issueCode(), state }).expect(502);
        expectFailure(res.body, 502, problem);
        expect(res.body.msg).toMatch(/^The CRM answered an unusable token: /);
        expect(await stored()).toEqual(before);
        expect(await countRows(t, 'crm_connections')).toBe(1);
      });

      it('a refresh answered with expires_in 1e20: the admin crm-sync answers 502, the next usable refresh is stored', async () => {
        const user = await registerUser(t);
        await t.settle();
        expect((await outboxOf(user.companyUuid)).entry?.syncedAt).toBeInstanceOf(Date);
        await t.dataSource
          .getRepository(CrmConnection)
          .update({ id: 1 }, { expiresAt: new Date(Date.now() + 30_000) });
        const before = await stored();
        crm.tokenAnswerOverride = { expires_in: 1e20 };
        const res = await crmSync(admin, user.companyUuid).expect(502);
        expectFailure(res.body, 502, /expires_in/);
        expect(await stored()).toEqual(before);

        // A usable answer next time: the refresh goes through and is stored.
        crm.tokenAnswerOverride = null;
        await crmSync(admin, user.companyUuid).expect(200);
        expect((await stored()).expiresAt.getTime()).toBeGreaterThan(Date.now() + 3500_000);
      });
    });

    it('across a restart: a company queued while the CRM stalled reaches it once from the next process', async () => {
      crm.mode = { kind: 'stall' };
      const user = await registerUser(t);
      await t.close(); // waits for the stalled call to time out
      crm.mode = { kind: 'ok' };

      t = await createTestApp({ database, env: crmEnv() });
      superAdmin = await createAdmin(t, 'superAdmin');
      const { entry } = await outboxOf(user.companyUuid);
      expect(entry).toMatchObject({ syncedAt: null });
      await makeDue();
      expect(await runJob()).toBe(1);
      expect(crm.accounts.get(user.companyUuid)?.writes).toBe(1);
      expect(await runJob()).toBe(0);
    });
  });
});

describe('CRM not configured', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { CRM_CLIENT_ID: undefined, CRM_CLIENT_SECRET: undefined } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('auth-crm, get-token and crm-sync answer 503 "CRM is not configured"; registration still works', async () => {
    const superAdmin = await createAdmin(t, 'superAdmin');
    const user = await registerUser(t);
    expectFailure(
      (
        await t
          .http()
          .get('/api/v1/auth-crm')
          .set(...bearer(superAdmin.accessToken))
          .expect(503)
      ).body,
      503,
      'CRM is not configured',
    );
    expectFailure(
      (await t.http().get('/api/v1/get-token?code=x&state=y.z').expect(503)).body,
      503,
      'CRM is not configured',
    );
    const sync = await t
      .http()
      .post(`/api/v1/admins/companies/${user.companyUuid}/crm-sync`)
      .set(...bearer(superAdmin.accessToken))
      .expect(503);
    expectFailure(sync.body, 503, 'CRM is not configured');
    expect(await countRows(t, 'crm_outbox')).toBe(1);
  });
});
