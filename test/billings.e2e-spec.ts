import { Billing } from '../src/modules/billings/entities/billing.entity';
import { User } from '../src/modules/users/entities/user.entity';
import { createBilling, createPackage, setBillingStatus } from './support/billing-fixtures';
import {
  bearer,
  countRows,
  createActiveUser,
  expectFailure,
  LoggedIn,
  RegisteredUser,
} from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const BASE = '/api/v1/billings';
const MISSING = '00000000-0000-4000-8000-000000000000';
const INVOICE_SECONDS = 172800;

type Owner = RegisteredUser & LoggedIn;

describe('Customer billings /api/v1/billings', () => {
  let t: TestApp;
  let owner: Owner;
  let stranger: Owner;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await createActiveUser(t);
    stranger = await createActiveUser(t);
  });
  afterAll(async () => {
    await t.close();
  });

  async function member(): Promise<Owner> {
    const u = await createActiveUser(t);
    const users = t.dataSource.getRepository(User);
    const ownerRow = await users.findOneByOrFail({ uuid: owner.userUuid });
    await users.update({ uuid: u.userUuid }, { companyId: ownerRow.companyId, companyRole: 'member' });
    return u;
  }

  it('GET /packages lists only active public packages, cheapest first', async () => {
    const cheap = await createPackage(t, { price: 1000 });
    const dear = await createPackage(t, { price: 900000 });
    const hidden = await createPackage(t, { isPublic: false });
    const archived = await createPackage(t, { isActive: false });
    const res = await t
      .http()
      .get(`${BASE}/packages`)
      .set(...bearer(owner.accessToken))
      .expect(200);
    const uuids = res.body.data.items.map((p: { uuid: string }) => p.uuid);
    expect(uuids).toEqual(expect.arrayContaining([cheap.uuid, dear.uuid]));
    expect(uuids).not.toContain(hidden.uuid);
    expect(uuids).not.toContain(archived.uuid);
    expect(uuids.indexOf(cheap.uuid)).toBeLessThan(uuids.indexOf(dear.uuid));
    expect(res.body.data.items[0]).not.toHaveProperty('companiesCount');
    await t.http().get(`${BASE}/packages`).expect(401);
  });

  it('POST / creates a billing with the package snapshot, INV number and payment window (201)', async () => {
    const pkg = await createPackage(t, { price: 150000, quota: 2500, currency: 'IDR' });
    const before = Date.now();
    const res = await t
      .http()
      .post(BASE)
      .set(...bearer(owner.accessToken))
      .send({ packageUuid: pkg.uuid, method: 'manual' })
      .expect(201);
    expect(res.body).toMatchObject({ status: 'success', code: 201, msg: 'Billing created' });
    const b = res.body.data;
    expect(b).toEqual({
      uuid: expect.any(String),
      number: expect.stringMatching(/^INV\/\d{4}\/\d{2}\/\d{6}$/),
      companyUuid: owner.companyUuid,
      packageUuid: pkg.uuid,
      packageName: pkg.name,
      quota: 2500,
      amount: 150000,
      currency: 'IDR',
      method: 'manual',
      status: 'pending',
      paymentUrl: null,
      gatewayInvoiceId: null,
      externalId: expect.any(String),
      expiresAt: expect.any(String),
      paidAt: null,
      paidAmount: null,
      paymentChannel: null,
      proofFile: null,
      rejectedReason: null,
      createdAt: expect.any(String),
    });
    const now = new Date();
    const yyyyMm = `${now.getUTCFullYear()}/${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
    expect(b.number.startsWith(`INV/${yyyyMm}/`)).toBe(true);
    const expires = Date.parse(b.expiresAt);
    expect(expires).toBeGreaterThanOrEqual(before + INVOICE_SECONDS * 1000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + INVOICE_SECONDS * 1000 + 1000);
    const row = await t.dataSource.getRepository(Billing).findOneByOrFail({ uuid: b.uuid });
    expect(row.externalId).toBe(b.number);
    expect(b.externalId).toBe(row.externalId);
  });

  it('shows externalId (what the gateway echoes back) on GET and in the list', async () => {
    const u = await createActiveUser(t);
    const made = await createBilling(t, u.accessToken, (await createPackage(t)).uuid, 'gateway');
    const row = await t.dataSource.getRepository(Billing).findOneByOrFail({ uuid: made.uuid });
    expect(row.externalId).toBe(made.number);

    const one = await t
      .http()
      .get(`${BASE}/${made.uuid}`)
      .set(...bearer(u.accessToken))
      .expect(200);
    expect(one.body.data.externalId).toBe(row.externalId);
    const list = await t
      .http()
      .get(BASE)
      .set(...bearer(u.accessToken))
      .expect(200);
    expect(list.body.data.items.map((b: { externalId: string }) => b.externalId)).toEqual([row.externalId]);
  });

  it('returns the open billing (200) instead of a duplicate; another package gets its own', async () => {
    const pkg = await createPackage(t);
    const first = await t
      .http()
      .post(BASE)
      .set(...bearer(owner.accessToken))
      .send({ packageUuid: pkg.uuid, method: 'gateway' })
      .expect(201);
    const again = await t
      .http()
      .post(BASE)
      .set(...bearer(owner.accessToken))
      .send({ packageUuid: pkg.uuid, method: 'manual' })
      .expect(200);
    expect(again.body.code).toBe(200);
    expect(again.body.data.uuid).toBe(first.body.data.uuid);

    // Awaiting review is open too.
    await setBillingStatus(t, first.body.data.uuid, 'awaiting_review');
    await t
      .http()
      .post(BASE)
      .set(...bearer(owner.accessToken))
      .send({ packageUuid: pkg.uuid, method: 'manual' })
      .expect(200);

    const other = await createPackage(t);
    const res = await t
      .http()
      .post(BASE)
      .set(...bearer(owner.accessToken))
      .send({ packageUuid: other.uuid, method: 'manual' })
      .expect(201);
    expect(res.body.data.uuid).not.toBe(first.body.data.uuid);
  });

  it('is race-safe: 12 concurrent creates for one package make one billing', async () => {
    const u = await createActiveUser(t);
    const pkg = await createPackage(t);
    const results = await Promise.all(
      Array.from({ length: 12 }, () =>
        t
          .http()
          .post(BASE)
          .set(...bearer(u.accessToken))
          .send({ packageUuid: pkg.uuid, method: 'manual' }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(results.map((r) => r.body.data.uuid)).size).toBe(1);
    expect(await t.dataSource.getRepository(Billing).count({ where: { packageId: pkg.id } })).toBe(1);
  });

  it('numbers are unique and follow the row id', async () => {
    const u = await createActiveUser(t);
    const numbers = new Set<string>();
    for (let i = 0; i < 3; i++)
      numbers.add((await createBilling(t, u.accessToken, (await createPackage(t)).uuid)).number);
    expect(numbers.size).toBe(3);
  });

  it('an open billing whose payment window passed is expired and a new one is made', async () => {
    const u = await createActiveUser(t);
    const pkg = await createPackage(t);
    const old = await createBilling(t, u.accessToken, pkg.uuid);
    await t.dataSource
      .getRepository(Billing)
      .update({ uuid: old.uuid }, { expiresAt: new Date(Date.now() - 1000) });
    const res = await t
      .http()
      .post(BASE)
      .set(...bearer(u.accessToken))
      .send({ packageUuid: pkg.uuid, method: 'manual' })
      .expect(201);
    expect(res.body.data.uuid).not.toBe(old.uuid);
    expect((await t.dataSource.getRepository(Billing).findOneByOrFail({ uuid: old.uuid })).status).toBe(
      'expired',
    );
  });

  it('answers 404 for an unknown, inactive or non-public package, and writes nothing', async () => {
    const hidden = await createPackage(t, { isPublic: false });
    const archived = await createPackage(t, { isActive: false });
    const before = await countRows(t, 'billings');
    for (const packageUuid of [MISSING, hidden.uuid, archived.uuid]) {
      const res = await t
        .http()
        .post(BASE)
        .set(...bearer(owner.accessToken))
        .send({ packageUuid, method: 'manual' })
        .expect(404);
      expectFailure(res.body, 404, 'Package not found');
    }
    expect(await countRows(t, 'billings')).toBe(before);
  });

  const badBodies: Array<[string, unknown]> = [
    ['an empty body', {}],
    ['no method', { packageUuid: MISSING }],
    ['an unknown method', { packageUuid: MISSING, method: 'cash' }],
    ['a malformed packageUuid', { packageUuid: 'abc', method: 'manual' }],
    ['an unknown field', { packageUuid: MISSING, method: 'manual', amount: 1 }],
    ['an array', [{ packageUuid: MISSING, method: 'manual' }]],
    ['a number as method', { packageUuid: MISSING, method: 1 }],
  ];

  it.each(badBodies)('POST / with %s is a 400 envelope and writes nothing', async (_label, body) => {
    const before = await countRows(t, 'billings');
    const res = await t
      .http()
      .post(BASE)
      .set(...bearer(owner.accessToken))
      .send(body as object)
      .expect(400);
    expectFailure(res.body, 400);
    expect(await countRows(t, 'billings')).toBe(before);
  });

  it('POST / with malformed JSON is a 400', async () => {
    const res = await t
      .http()
      .post(BASE)
      .set(...bearer(owner.accessToken))
      .set('content-type', 'application/json')
      .send('{"packageUuid":')
      .expect(400);
    expectFailure(res.body, 400);
  });

  it('only owners create and cancel; members read (403 otherwise)', async () => {
    const m = await member();
    const pkg = await createPackage(t);
    const before = await countRows(t, 'billings');
    await t
      .http()
      .post(BASE)
      .set(...bearer(m.accessToken))
      .send({ packageUuid: pkg.uuid, method: 'manual' })
      .expect(403);
    expect(await countRows(t, 'billings')).toBe(before);
    const billing = await createBilling(t, owner.accessToken, pkg.uuid);
    await t
      .http()
      .get(`${BASE}/${billing.uuid}`)
      .set(...bearer(m.accessToken))
      .expect(200);
    await t
      .http()
      .get(BASE)
      .set(...bearer(m.accessToken))
      .expect(200);
    await t
      .http()
      .post(`${BASE}/${billing.uuid}/cancel`)
      .set(...bearer(m.accessToken))
      .expect(403);
    await t
      .http()
      .post(`${BASE}/${billing.uuid}/cancel`)
      .set(...bearer(owner.accessToken))
      .expect(200);
  });

  it("lists the company's billings newest first, with status filter and paging", async () => {
    const u = await createActiveUser(t);
    const made: string[] = [];
    for (let i = 0; i < 3; i++)
      made.push((await createBilling(t, u.accessToken, (await createPackage(t)).uuid)).uuid);
    await t
      .http()
      .post(`${BASE}/${made[0]}/cancel`)
      .set(...bearer(u.accessToken))
      .expect(200);
    // Another company's billing never shows.
    await createBilling(t, stranger.accessToken, (await createPackage(t)).uuid);

    const res = await t
      .http()
      .get(BASE)
      .set(...bearer(u.accessToken))
      .expect(200);
    expect(res.body.data.items.map((b: { uuid: string }) => b.uuid)).toEqual([...made].reverse());
    expect(res.body.data.meta).toEqual({ page: 1, limit: 20, totalItems: 3, totalPages: 1 });

    const cancelled = await t
      .http()
      .get(`${BASE}?status=cancelled`)
      .set(...bearer(u.accessToken))
      .expect(200);
    expect(cancelled.body.data.items.map((b: { uuid: string }) => b.uuid)).toEqual([made[0]]);

    const page2 = await t
      .http()
      .get(`${BASE}?limit=2&page=2`)
      .set(...bearer(u.accessToken))
      .expect(200);
    expect(page2.body.data.items.map((b: { uuid: string }) => b.uuid)).toEqual([made[0]]);
    expect(page2.body.data.meta).toEqual({ page: 2, limit: 2, totalItems: 3, totalPages: 2 });

    for (const q of ['status=open', 'limit=0', 'limit=101', 'page=-1', 'page=x', 'unknown=1']) {
      const bad = await t
        .http()
        .get(`${BASE}?${q}`)
        .set(...bearer(u.accessToken));
      expect([q, bad.status]).toEqual([q, 400]);
      expectFailure(bad.body, 400);
    }
  });

  it("another company's billing is a 404 on every route; a malformed uuid is a 400", async () => {
    const theirs = await createBilling(t, stranger.accessToken, (await createPackage(t)).uuid);
    for (const [method, path] of [
      ['get', `${BASE}/${theirs.uuid}`],
      ['get', `${BASE}/${theirs.uuid}/proof`],
      ['post', `${BASE}/${theirs.uuid}/cancel`],
      ['post', `${BASE}/${theirs.uuid}/proof`],
      ['get', `${BASE}/${MISSING}`],
    ] as const) {
      const res = await t
        .http()
        [method](path)
        .set(...bearer(owner.accessToken));
      expect([path, res.status]).toEqual([path, 404]);
      expectFailure(res.body, 404, 'Billing not found');
    }
    expect((await t.dataSource.getRepository(Billing).findOneByOrFail({ uuid: theirs.uuid })).status).toBe(
      'pending',
    );
    for (const path of [`${BASE}/not-a-uuid`, `${BASE}/123/proof`]) {
      expectFailure(
        (
          await t
            .http()
            .get(path)
            .set(...bearer(owner.accessToken))
            .expect(400)
        ).body,
        400,
        /uuid is expected/,
      );
    }
    await t
      .http()
      .post(`${BASE}/xyz/cancel`)
      .set(...bearer(owner.accessToken))
      .expect(400);
  });

  it('cancel: pending → cancelled, anything else 409', async () => {
    const pkg = await createPackage(t);
    const b = await createBilling(t, owner.accessToken, pkg.uuid);
    const res = await t
      .http()
      .post(`${BASE}/${b.uuid}/cancel`)
      .set(...bearer(owner.accessToken))
      .expect(200);
    expect(res.body).toMatchObject({ msg: 'Billing cancelled', data: { uuid: b.uuid, status: 'cancelled' } });
    const again = await t
      .http()
      .post(`${BASE}/${b.uuid}/cancel`)
      .set(...bearer(owner.accessToken))
      .expect(409);
    expectFailure(again.body, 409, 'Cannot cancel a billing that is cancelled');
    for (const status of ['awaiting_review', 'paid', 'refunded', 'expired'] as const) {
      const other = await createBilling(t, owner.accessToken, (await createPackage(t)).uuid);
      await setBillingStatus(t, other.uuid, status);
      await t
        .http()
        .post(`${BASE}/${other.uuid}/cancel`)
        .set(...bearer(owner.accessToken))
        .expect(409);
      expect((await t.dataSource.getRepository(Billing).findOneByOrFail({ uuid: other.uuid })).status).toBe(
        status,
      );
    }
  });

  it('admin tokens are refused on the customer routes (403)', async () => {
    const { createAdmin } = await import('./support/factories');
    const a = await createAdmin(t, 'superAdmin');
    await t
      .http()
      .get(BASE)
      .set(...bearer(a.accessToken))
      .expect(403);
    await t
      .http()
      .get(`${BASE}/packages`)
      .set(...bearer(a.accessToken))
      .expect(403);
  });
});

describe('Customer billings with PAYMENT_INVOICE_DURATION set', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { PAYMENT_INVOICE_DURATION: '3600' }, smtp: true });
  });
  afterAll(async () => {
    await t.close();
  });

  it('uses it as the payment window', async () => {
    const u = await createActiveUser(t);
    const b = await createBilling(t, u.accessToken, (await createPackage(t)).uuid);
    const row = await t.dataSource.getRepository(Billing).findOneByOrFail({ uuid: b.uuid });
    const window = row.expiresAt.getTime() - row.createdAt.getTime();
    expect(window).toBeGreaterThan(3590_000);
    expect(window).toBeLessThan(3610_000);
  });
});
