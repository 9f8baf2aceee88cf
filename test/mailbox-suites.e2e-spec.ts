import { Company } from '../src/modules/companies/entities/company.entity';
import { CompanyAuditEvent } from '../src/modules/companies/entities/company-audit-event.entity';
import {
  bearer,
  createActiveMember,
  createActiveUser,
  createAdmin,
  CreatedAdmin,
  expectFailure,
  LoggedIn,
  RegisteredUser,
  storeDomain,
} from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const PUBLIC_URL = 'https://relay.example.test';

type Owner = RegisteredUser & LoggedIn;

describe('Mailbox suites (/api/v1/mailbox-suites, /public/company/script/:token)', () => {
  let t: TestApp;
  let owner: Owner;
  let member: LoggedIn;
  let admin: CreatedAdmin;
  let company: Company;

  const get = (who: LoggedIn, path = '') =>
    t
      .http()
      .get(`/api/v1/mailbox-suites${path}`)
      .set(...bearer(who.accessToken));
  const put = (who: LoggedIn, body: unknown) =>
    t
      .http()
      .put('/api/v1/mailbox-suites')
      .set(...bearer(who.accessToken))
      .send(body as object);
  const rotate = (who: LoggedIn) =>
    t
      .http()
      .post('/api/v1/mailbox-suites/script-token')
      .set(...bearer(who.accessToken));
  const download = (url: string) => t.http().get(new URL(url).pathname + new URL(url).search);
  const stored = () => t.dataSource.getRepository(Company).findOneByOrFail({ id: company.id });

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        PUBLIC_URL,
        RELAY_NAME: 'Acme Relay',
        RELAY_SMARTHOST: 'smtp.relay.example',
        RELAY_TLS_DOMAIN: 'relay.example',
      },
    });
    owner = await createActiveUser(t);
    company = await t.dataSource.getRepository(Company).findOneByOrFail({ uuid: owner.companyUuid });
    await storeDomain(t, company.id, 'acme.co.id', 'verified');
    await storeDomain(t, company.id, 'xn--bcher-kva.example', 'verified');
    await storeDomain(t, company.id, 'pending.example', 'pending');

    member = await createActiveMember(t, owner);
    admin = await createAdmin(t, 'admin');
  });

  afterAll(async () => {
    await t.close();
  });

  it('GET: a new company has chosen no suite, has no script URL, and is told how to relay with SMTP auth', async () => {
    const res = await get(member).expect(200);
    expect(res.body).toMatchObject({ status: 'success', code: 200, msg: 'Mailbox suite fetched' });
    expect(res.body.data).toEqual({
      suite: 'none',
      groupName: null,
      smartHost: 'smtp.relay.example',
      tlsDomain: 'relay.example',
      relayUsername: company.relayUsername,
      domains: ['acme.co.id', 'xn--bcher-kva.example'],
      scriptUrl: null,
      steps: expect.arrayContaining([expect.stringContaining(company.relayUsername)]),
    });
  });

  it('PUT: the owner chooses Microsoft 365 with a group; the choice is stored and answered', async () => {
    const res = await put(owner, { suite: 'microsoft365', groupName: "  O'Brien’s team  " }).expect(200);
    expect(res.body.msg).toBe('Mailbox suite saved');
    expect(res.body.data).toMatchObject({
      suite: 'microsoft365',
      groupName: "O'Brien’s team",
      scriptUrl: null,
    });
    expect(res.body.data.steps.join('\n')).toContain('"Acme Relay relay"');
    const row = await stored();
    expect(row.mailboxSuite).toBe('microsoft365');
    expect(row.mailboxGroupName).toBe("O'Brien’s team");
  });

  it.each([
    [{ suite: 'exchange' }, 'suite'],
    [{}, 'suite'],
    [{ suite: null }, 'suite'],
    [{ suite: 'microsoft365', groupName: 'Sales\nRemove-Mailbox' }, 'groupName'],
    [{ suite: 'microsoft365', groupName: 'Sales\r' + 'x' }, 'groupName'],
    [{ suite: 'microsoft365', groupName: 'Sales\u2028x' }, 'groupName'],
    [{ suite: 'microsoft365', groupName: 'x'.repeat(257) }, 'groupName'],
    [{ suite: 'microsoft365', groupName: 42 }, 'groupName'],
  ])('PUT %j → 400 naming %s, nothing changed', async (body, field) => {
    const res = await put(owner, body).expect(400);
    expectFailure(res.body, 400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    const row = await stored();
    expect(row.mailboxSuite).toBe('microsoft365');
    expect(row.mailboxGroupName).toBe("O'Brien’s team");
  });

  it('PUT and POST script-token are the owner’s: a member gets 403 and nothing changes', async () => {
    expectFailure((await put(member, { suite: 'google-workspace' }).expect(403)).body, 403);
    expectFailure((await rotate(member).expect(403)).body, 403);
    const row = await t.dataSource
      .getRepository(Company)
      .createQueryBuilder('c')
      .addSelect('c.scriptTokenHash')
      .where({ id: company.id })
      .getOneOrFail();
    expect(row.mailboxSuite).toBe('microsoft365');
    expect(row.scriptTokenHash).toBeNull();
  });

  it('preview: the PowerShell script with the company’s values, each in a single-quoted string', async () => {
    const res = await get(member, '/preview').expect(200);
    expect(res.body.data.filename).toBe(`relay-setup-${company.relayUsername}.ps1`);
    const script: string = res.body.data.content;
    expect(script).toContain(
      "New-OutboundConnector -Name 'Acme Relay relay' -ConnectorType Partner -UseMXRecord $false -SmartHosts 'smtp.relay.example' -TlsSettings DomainValidation -TlsDomain 'relay.example' -IsTransportRuleScoped $true -Enabled $true",
    );
    expect(script).toContain(
      "New-TransportRule -Name 'Acme Relay route' -FromScope InOrganization -FromMemberOf 'O''Brien’’s team' -SenderDomainIs 'acme.co.id','xn--bcher-kva.example' -RouteMessageOutboundConnector 'Acme Relay relay' -StopRuleProcessing $true",
    );
    expect(script).not.toContain('pending.example');
  });

  it('preview ?suite=google-workspace: the text instructions; a bad suite is a 400', async () => {
    const res = await get(member, '/preview?suite=google-workspace').expect(200);
    expect(res.body.data.filename).toBe(`relay-setup-${company.relayUsername}.txt`);
    expect(res.body.data.content).toContain('"Outbound gateway", enter: smtp.relay.example');
    expectFailure((await get(member, '/preview?suite=lotus').expect(400)).body, 400);
  });

  it('script-token: a URL that serves the script as an attachment; the owner sees it again in GET', async () => {
    const res = await rotate(owner).expect(200);
    expect(res.body.msg).toMatch(/Script URL created/);
    const url: string = res.body.data.scriptUrl;
    expect(url).toMatch(new RegExp(`^${PUBLIC_URL}/public/company/script/[A-Za-z0-9_-]{43}$`));
    expect((await get(member).expect(200)).body.data.scriptUrl).toBe(url);

    const script = await download(url).expect(200);
    expect(script.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(script.headers['content-disposition']).toBe(
      `attachment; filename="relay-setup-${company.relayUsername}.ps1"`,
    );
    expect(script.headers['x-request-id']).toBeTruthy();
    const preview = await get(member, '/preview').expect(200);
    expect(script.text).toBe(preview.body.data.content);

    const google = await download(`${url}?suite=google-workspace`).expect(200);
    expect(google.headers['content-disposition']).toBe(
      `attachment; filename="relay-setup-${company.relayUsername}.txt"`,
    );
    expect(google.text).toContain('Relay account: ' + company.relayUsername);
    expectFailure((await download(`${url}?suite=lotus`).expect(400)).body, 400);

    // Stored as a digest and a ciphertext, never as the token.
    const row = await t.dataSource
      .getRepository(Company)
      .createQueryBuilder('c')
      .addSelect(['c.scriptTokenHash', 'c.scriptTokenCipher'])
      .where({ id: company.id })
      .getOneOrFail();
    const token = url.split('/').pop()!;
    expect(row.scriptTokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.scriptTokenCipher).not.toContain(token);
  });

  it('rotating (owner or admin) makes the old URL a 404 at once, recorded in the audit events', async () => {
    const first = (await rotate(owner).expect(200)).body.data.scriptUrl as string;
    await download(first).expect(200);
    const second = (await rotate(owner).expect(200)).body.data.scriptUrl as string;
    const gone = await download(first).expect(404);
    expectFailure(gone.body, 404, 'Script not found');
    await download(second).expect(200);

    const byAdmin = await t
      .http()
      .post(`/api/v1/admins/companies/${owner.companyUuid}/script-token`)
      .set(...bearer(admin.accessToken))
      .expect(200);
    await download(second).expect(404);
    await download(byAdmin.body.data.scriptUrl).expect(200);
    expect((await get(owner).expect(200)).body.data.scriptUrl).toBe(byAdmin.body.data.scriptUrl);

    const audits = await t.dataSource
      .getRepository(CompanyAuditEvent)
      .find({ where: { companyId: company.id, action: 'script_token.rotated' } });
    expect(audits.length).toBeGreaterThanOrEqual(4);
    expect(audits.some((a) => a.adminUuid === admin.uuid)).toBe(true);
  });

  it.each(['not-a-token', 'A'.repeat(43), "'; DROP TABLE companies; --", '%E2%80%99'])(
    'public script for the unknown token %j → 404 saying nothing more',
    async (token) => {
      const res = await t
        .http()
        .get(`/public/company/script/${encodeURIComponent(token)}`)
        .expect(404);
      expectFailure(res.body, 404, 'Script not found');
    },
  );

  it('a company that chose no suite: the public URL answers 409 unless ?suite= is given', async () => {
    await put(owner, { suite: 'none', groupName: null }).expect(200);
    const url = (await get(owner).expect(200)).body.data.scriptUrl as string;
    expectFailure((await download(url).expect(409)).body, 409, /No mailbox suite chosen/);
    await download(`${url}?suite=microsoft365`).expect(200);
    expectFailure((await get(member, '/preview').expect(409)).body, 409);
  });

  it('a company without verified domains gets a script that stops before it changes anything', async () => {
    const other = await createActiveUser(t);
    await put(other, { suite: 'microsoft365' }).expect(200);
    const res = await get(other, '/preview').expect(200);
    expect(res.body.data.content).toMatch(/throw 'No verified sender domain yet/);
    expect(res.body.data.content.indexOf('throw')).toBeLessThan(
      res.body.data.content.indexOf('Connect-ExchangeOnline'),
    );
  });

  it('needs a login: 401 without a token', async () => {
    expectFailure((await t.http().get('/api/v1/mailbox-suites').expect(401)).body, 401);
    expectFailure((await t.http().get('/api/v1/mailbox-suites/preview').expect(401)).body, 401);
  });
});
