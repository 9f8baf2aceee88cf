import { relayPasswordDigest } from '../src/modules/companies/relay-credentials';
import { Company } from '../src/modules/companies/entities/company.entity';
import { CompanyStateService } from '../src/modules/companies/company-state.service';
import { Package } from '../src/modules/packages/entities/package.entity';
import { TransactionService } from '../src/database/transaction.service';
import {
  bearer,
  countAll,
  createActiveMember,
  createActiveUser,
  createAdmin,
  expectFailure,
  LoggedIn,
  RegisteredUser,
} from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const DAY = 86_400_000;
const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);

describe('Customer company routes (/api/v1/companies/:companyUuid)', () => {
  let t: TestApp;
  let owner: RegisteredUser & LoggedIn;
  let member: LoggedIn;
  let other: RegisteredUser & LoggedIn;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await createActiveUser(t);
    other = await createActiveUser(t);
    member = await createActiveMember(t, owner);
  });
  afterAll(async () => {
    await t.close();
  });

  const base = (uuid: string) => `/api/v1/companies/${uuid}`;
  const companyRow = (uuid: string) =>
    t.dataSource
      .getRepository(Company)
      .createQueryBuilder('c')
      .addSelect(['c.relayPasswordHash', 'c.scriptTokenHash'])
      .where('c.uuid = :uuid', { uuid })
      .getOneOrFail();
  const tables = () =>
    countAll(t, ['users', 'contacts', 'companies', 'company_audit_events', 'notifications']);

  it('GET returns the company with relay username, relayStatus and an empty subscription before any payment', async () => {
    for (const caller of [owner, member]) {
      const res = await t
        .http()
        .get(base(owner.companyUuid))
        .set(...bearer(caller.accessToken))
        .expect(200);
      expect(res.body).toMatchObject({ status: 'success', code: 200, msg: 'Company fetched' });
      expect(res.body.data).toEqual({
        uuid: owner.companyUuid,
        name: 'Acme Mail',
        legalName: null,
        taxId: null,
        address: null,
        city: null,
        country: 'ID',
        phone: null,
        website: null,
        status: 'active',
        suspendedReason: null,
        relayUsername: expect.stringMatching(/^r-[0-9a-z]{8}$/),
        relayStatus: 'no_package',
        mailboxSuite: 'none',
        allowedIps: [],
        subscription: {
          packageUuid: null,
          packageName: null,
          periodStart: null,
          periodEnd: null,
          quota: 0,
          used: 0,
          remaining: 0,
        },
        createdAt: expect.any(String),
      });
      expect(JSON.stringify(res.body)).not.toMatch(/hash|cipher/i);
    }
  });

  it('GET shows the subscription once a package is paid', async () => {
    const user = await createActiveUser(t);
    const company = await companyRow(user.companyUuid);
    const pkgRepo = t.dataSource.getRepository(Package);
    const pkg = await pkgRepo.save(
      pkgRepo.create({ name: 'Company Starter', quota: 100, price: 1000, currency: 'IDR', durationDays: 30 }),
    );
    const paidAt = new Date();
    await t.app
      .get(TransactionService)
      .run((em) =>
        t.app
          .get(CompanyStateService)
          .applyPayment(em, company.id, { packageUuid: pkg.uuid, quota: 100, durationDays: 30 }, paidAt),
      );
    await t.app.get(CompanyStateService).recordUsage(company.id, 30);
    const res = await t
      .http()
      .get(base(user.companyUuid))
      .set(...bearer(user.accessToken))
      .expect(200);
    expect(res.body.data).toMatchObject({
      relayStatus: 'active',
      subscription: {
        packageUuid: pkg.uuid,
        packageName: 'Company Starter',
        periodStart: paidAt.toISOString(),
        periodEnd: new Date(paidAt.getTime() + 30 * DAY).toISOString(),
        quota: 100,
        used: 30,
        remaining: 70,
      },
    });

    // usage: the period's figures and one entry per day of the window.
    const usage = await t
      .http()
      .get(`${base(user.companyUuid)}/usage`)
      .set(...bearer(user.accessToken))
      .expect(200);
    expect(usage.body.data).toEqual({
      quota: 100,
      used: 30,
      remaining: 70,
      periodStart: paidAt.toISOString(),
      periodEnd: new Date(paidAt.getTime() + 30 * DAY).toISOString(),
      daily: [{ date: dayOf(Date.now()), count: 30 }],
    });

    // An explicit window, with earlier days recorded directly, and a timestamp bound.
    const today = Date.now();
    await t.dataSource.query(
      `INSERT INTO company_usage_days (company_id, day, count) VALUES (${company.id}, '${dayOf(today - 2 * DAY)}', 5), (${company.id}, '${dayOf(today - 5 * DAY)}', 9)`,
    );
    const window = await t
      .http()
      .get(`${base(user.companyUuid)}/usage`)
      .query({ from: dayOf(today - 3 * DAY), to: new Date(today).toISOString() })
      .set(...bearer(user.accessToken))
      .expect(200);
    expect(window.body.data.daily).toEqual([
      { date: dayOf(today - 3 * DAY), count: 0 },
      { date: dayOf(today - 2 * DAY), count: 5 },
      { date: dayOf(today - DAY), count: 0 },
      { date: dayOf(today), count: 30 },
    ]);
  });

  it('usage of a company that never paid is 0, 0, 0, null, null', async () => {
    const res = await t
      .http()
      .get(`${base(owner.companyUuid)}/usage`)
      .query({ from: '2026-01-01', to: '2026-01-03' })
      .set(...bearer(member.accessToken))
      .expect(200);
    expect(res.body.data).toEqual({
      quota: 0,
      used: 0,
      remaining: 0,
      periodStart: null,
      periodEnd: null,
      daily: [
        { date: '2026-01-01', count: 0 },
        { date: '2026-01-02', count: 0 },
        { date: '2026-01-03', count: 0 },
      ],
    });
    const defaults = await t
      .http()
      .get(`${base(owner.companyUuid)}/usage`)
      .set(...bearer(owner.accessToken))
      .expect(200);
    expect(defaults.body.data.daily).toHaveLength(30);
    expect(defaults.body.data.daily.at(-1)).toEqual({ date: dayOf(Date.now()), count: 0 });
  });

  it.each([
    ['from after to', { from: '2026-02-02', to: '2026-02-01' }, 'from must not be after to'],
    ['an impossible date', { from: '2026-02-30' }, 'Validation failed'],
    ['a date in another format', { from: '01/02/2026' }, 'Validation failed'],
    ['a timestamp without a zone', { to: '2026-02-01T10:00:00' }, 'Validation failed'],
    ['garbage', { to: 'yesterday' }, 'Validation failed'],
    [
      'a window over 366 days',
      { from: '2024-01-01', to: '2026-01-01' },
      'The range may span at most 366 days',
    ],
    ['an unknown query parameter', { days: '7' }, 'Validation failed'],
  ])('usage refuses %s with 400', async (_name, query, msg) => {
    const res = await t
      .http()
      .get(`${base(owner.companyUuid)}/usage`)
      .query(query)
      .set(...bearer(owner.accessToken))
      .expect(400);
    expectFailure(res.body, 400, msg);
  });

  it('PATCH (owner) updates the given fields, upper-cases the country and clears fields given null or ""', async () => {
    const res = await t
      .http()
      .patch(base(owner.companyUuid))
      .set(...bearer(owner.accessToken))
      .send({
        name: '  Acme Mail Indonesia ',
        legalName: 'PT Acme Mail Indonesia',
        taxId: '01.234.567.8-901.000',
        address: 'Jl. Sudirman 1',
        city: 'Jakarta',
        country: 'sg',
        phone: '+62 21 555 0100',
        website: 'https://acme.co.id',
      })
      .expect(200);
    expect(res.body).toMatchObject({
      msg: 'Company updated',
      data: {
        uuid: owner.companyUuid,
        name: 'Acme Mail Indonesia',
        legalName: 'PT Acme Mail Indonesia',
        country: 'SG',
        website: 'https://acme.co.id',
        relayStatus: 'no_package',
      },
    });
    let row = await companyRow(owner.companyUuid);
    expect(row).toMatchObject({
      name: 'Acme Mail Indonesia',
      legalName: 'PT Acme Mail Indonesia',
      taxId: '01.234.567.8-901.000',
      address: 'Jl. Sudirman 1',
      city: 'Jakarta',
      country: 'SG',
      phone: '+62 21 555 0100',
      website: 'https://acme.co.id',
    });

    await t
      .http()
      .patch(base(owner.companyUuid))
      .set(...bearer(owner.accessToken))
      .send({ legalName: null, website: '', country: 'ID' })
      .expect(200);
    row = await companyRow(owner.companyUuid);
    expect(row).toMatchObject({ legalName: null, website: null, country: 'ID', city: 'Jakarta' });

    // An empty body changes nothing.
    const same = await t
      .http()
      .patch(base(owner.companyUuid))
      .set(...bearer(owner.accessToken))
      .send({})
      .expect(200);
    expect(same.body.data.name).toBe('Acme Mail Indonesia');
  });

  it.each([
    ['an unknown country', { country: 'XX' }],
    ['a three-letter country', { country: 'IDN' }],
    ['country null', { country: null }],
    ['name null', { name: null }],
    ['an empty name', { name: '   ' }],
    ['a long name', { name: 'x'.repeat(201) }],
    ['a bad website', { website: 'not a url' }],
    ['a website with another scheme', { website: 'ftp://acme.co.id' }],
    ['a bad phone', { phone: 'call me' }],
    ['a number as city', { city: 12 }],
    ['an unknown field', { status: 'suspended' }],
    ['a field owners may not set', { relayUsername: 'r-mine' }],
  ])('PATCH refuses %s with 400 and writes nothing', async (_name, body) => {
    const before = await companyRow(owner.companyUuid);
    const res = await t
      .http()
      .patch(base(owner.companyUuid))
      .set(...bearer(owner.accessToken))
      .send(body)
      .expect(400);
    expectFailure(res.body, 400, 'Validation failed');
    expect(res.body.error.details.length).toBeGreaterThan(0);
    expect(await companyRow(owner.companyUuid)).toEqual(before);
  });

  it('POST relay-password (owner) returns new credentials once, stores only its SHA-256 digest, and ends the old password', async () => {
    const first = await t
      .http()
      .post(`${base(owner.companyUuid)}/relay-password`)
      .set(...bearer(owner.accessToken))
      .expect(200);
    const { relayUsername, relayPassword } = first.body.data as {
      relayUsername: string;
      relayPassword: string;
    };
    expect(relayUsername).toBe((await companyRow(owner.companyUuid)).relayUsername);
    expect(relayPassword).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const hash1 = (await companyRow(owner.companyUuid)).relayPasswordHash!;
    expect(hash1).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(hash1).not.toContain(relayPassword);
    expect(hash1).toBe(relayPasswordDigest(relayPassword));

    const second = await t
      .http()
      .post(`${base(owner.companyUuid)}/relay-password`)
      .set(...bearer(owner.accessToken))
      .send({ ignored: 'a route without a body ignores a well-formed one' })
      .expect(200);
    const hash2 = (await companyRow(owner.companyUuid)).relayPasswordHash!;
    expect(second.body.data.relayPassword).not.toBe(relayPassword);
    expect(hash2).not.toBe(hash1);
    expect(hash2).toBe(relayPasswordDigest(second.body.data.relayPassword));

    // Not shown again anywhere.
    const get = await t
      .http()
      .get(base(owner.companyUuid))
      .set(...bearer(owner.accessToken))
      .expect(200);
    expect(JSON.stringify(get.body)).not.toContain(second.body.data.relayPassword);
  });

  it('PUT allowed-ips (owner) validates, deduplicates and stores the list; [] clears it', async () => {
    const res = await t
      .http()
      .put(`${base(owner.companyUuid)}/allowed-ips`)
      .set(...bearer(owner.accessToken))
      .send({
        ips: [
          '40.92.0.0/15',
          '203.0.113.7',
          ' 2001:DB8::/48 ',
          '203.0.113.7',
          '2001:db8:0::/48',
          '::ffff:192.0.2.7/120',
        ],
      })
      .expect(200);
    expect(res.body.data).toEqual({ ips: ['40.92.0.0/15', '203.0.113.7', '2001:db8::/48', '192.0.2.0/24'] });
    expect((await companyRow(owner.companyUuid)).allowedIps).toEqual([
      '40.92.0.0/15',
      '203.0.113.7',
      '2001:db8::/48',
      '192.0.2.0/24',
    ]);
    const get = await t
      .http()
      .get(base(owner.companyUuid))
      .set(...bearer(member.accessToken))
      .expect(200);
    expect(get.body.data.allowedIps).toEqual([
      '40.92.0.0/15',
      '203.0.113.7',
      '2001:db8::/48',
      '192.0.2.0/24',
    ]);

    const fifty = Array.from({ length: 50 }, (_, i) => `10.0.${i}.0/24`);
    await t
      .http()
      .put(`${base(owner.companyUuid)}/allowed-ips`)
      .set(...bearer(owner.accessToken))
      .send({ ips: fifty })
      .expect(200);
    expect((await companyRow(owner.companyUuid)).allowedIps).toHaveLength(50);

    await t
      .http()
      .put(`${base(owner.companyUuid)}/allowed-ips`)
      .set(...bearer(owner.accessToken))
      .send({ ips: [] })
      .expect(200);
    expect((await companyRow(owner.companyUuid)).allowedIps).toEqual([]);
  });

  it.each([
    ['a missing list', {}],
    ['a string instead of a list', { ips: '10.0.0.1' }],
    ['a hostname', { ips: ['mail.acme.co.id'] }],
    ['an out-of-range address', { ips: ['10.0.0.256'] }],
    ['an IPv4 prefix over 32', { ips: ['10.0.0.0/33'] }],
    ['an IPv6 prefix over 128', { ips: ['2001:db8::/129'] }],
    ['a range wider than IPv4 /14', { ips: ['10.0.0.0/8'] }],
    ['a range wider than IPv6 /36', { ips: ['2001:db8::/32'] }],
    ['a range of IPv4-mapped IPv6 addresses', { ips: ['::ffff:0:0/96'] }],
    ['a NAT64 range', { ips: ['64:ff9b::/96'] }],
    ['a non-numeric prefix', { ips: ['10.0.0.0/abc'] }],
    ['a number in the list', { ips: [167772161] }],
    ['51 entries', { ips: Array.from({ length: 51 }, (_, i) => `10.1.${i}.1`) }],
    ['an unknown field', { ips: ['10.0.0.1'], replace: true }],
  ])('PUT allowed-ips refuses %s with 400 and writes nothing', async (_name, body) => {
    await t.dataSource
      .getRepository(Company)
      .update({ uuid: owner.companyUuid }, { allowedIps: ['198.51.100.1'] });
    const res = await t
      .http()
      .put(`${base(owner.companyUuid)}/allowed-ips`)
      .set(...bearer(owner.accessToken))
      .send(body)
      .expect(400);
    expectFailure(res.body, 400, 'Validation failed');
    expect((await companyRow(owner.companyUuid)).allowedIps).toEqual(['198.51.100.1']);
  });

  const ownerRoutes: Array<[string, 'patch' | 'post' | 'put', string, object]> = [
    ['PATCH /:companyUuid', 'patch', '', { name: 'Taken Over' }],
    ['POST /:companyUuid/relay-password', 'post', '/relay-password', {}],
    ['PUT /:companyUuid/allowed-ips', 'put', '/allowed-ips', { ips: ['10.9.9.9'] }],
  ];

  it.each(ownerRoutes)(
    '%s refuses a member (not an owner) with 403 and writes nothing',
    async (_n, method, path, body) => {
      const before = await companyRow(owner.companyUuid);
      const res = await t
        .http()
        [method](`${base(owner.companyUuid)}${path}`)
        .set(...bearer(member.accessToken))
        .send(body)
        .expect(403);
      expectFailure(res.body, 403, 'Only the company owner may do this');
      expect(await companyRow(owner.companyUuid)).toEqual(before);
    },
  );

  it.each([
    ...ownerRoutes,
    ['GET /:companyUuid', 'get', '', {}],
    ['GET /:companyUuid/usage', 'get', '/usage', {}],
  ] as Array<[string, 'get' | 'patch' | 'post' | 'put', string, object]>)(
    "%s refuses another company's :companyUuid with 403 and writes nothing",
    async (_n, method, path, body) => {
      const before = await companyRow(other.companyUuid);
      const counts = await tables();
      const res = await t
        .http()
        [method](`${base(other.companyUuid)}${path}`)
        .set(...bearer(owner.accessToken))
        .send(body)
        .expect(403);
      expectFailure(res.body, 403, 'This company is not yours');
      expect(await companyRow(other.companyUuid)).toEqual(before);
      expect(await tables()).toEqual(counts);
      // A malformed :companyUuid is a 400, like every invalid UUID (checked before ownership).
      const bad = await t
        .http()
        [method](`${base('not-a-uuid')}${path}`)
        .set(...bearer(owner.accessToken))
        .send(body)
        .expect(400);
      expectFailure(bad.body, 400, /uuid is expected/);
    },
  );

  it('refuses a request without a token (401) and one with an admin token (403)', async () => {
    const res = await t.http().get(base(owner.companyUuid)).expect(401);
    expectFailure(res.body, 401);
    const admin = await createAdmin(t, 'superAdmin');
    const asAdmin = await t
      .http()
      .patch(base(owner.companyUuid))
      .set(...bearer(admin.accessToken))
      .send({ name: 'By An Admin' })
      .expect(403);
    expectFailure(asAdmin.body, 403, 'This route is for users only');
  });
});
