import { Company } from '../src/modules/companies/entities/company.entity';
import { Package } from '../src/modules/packages/entities/package.entity';
import { createBilling, createPackage } from './support/billing-fixtures';
import {
  bearer,
  countRows,
  createActiveUser,
  createAdmin,
  CreatedAdmin,
  expectFailure,
  LoggedIn,
} from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const BASE = '/api/v1/admins/packages';
const MISSING = '00000000-0000-4000-8000-000000000000';

describe('Admin packages /api/v1/admins/packages', () => {
  let t: TestApp;
  let superAdmin: CreatedAdmin;
  let admin: CreatedAdmin;
  let accounting: CreatedAdmin;
  let user: LoggedIn & { companyUuid: string };

  const valid = (name: string) => ({ name, quota: 5000, price: 250000, currency: 'IDR' });

  beforeAll(async () => {
    t = await createTestApp({ smtp: true });
    [superAdmin, admin, accounting] = [
      await createAdmin(t, 'superAdmin'),
      await createAdmin(t, 'admin'),
      await createAdmin(t, 'accounting'),
    ];
    user = await createActiveUser(t);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('role matrix: read all roles, write superAdmin and accounting', () => {
    it('lets every admin role read, refuses users (403) and anonymous callers (401)', async () => {
      const pkg = await createPackage(t);
      for (const a of [superAdmin, admin, accounting]) {
        await t
          .http()
          .get(BASE)
          .set(...bearer(a.accessToken))
          .expect(200);
        await t
          .http()
          .get(`${BASE}/${pkg.uuid}`)
          .set(...bearer(a.accessToken))
          .expect(200);
      }
      const res = await t
        .http()
        .get(BASE)
        .set(...bearer(user.accessToken))
        .expect(403);
      expectFailure(res.body, 403);
      expectFailure((await t.http().get(BASE).expect(401)).body, 401);
    });

    it('lets superAdmin and accounting create, update and delete; admin gets 403 and nothing changes', async () => {
      for (const [i, a] of [superAdmin, accounting].entries()) {
        const created = await t
          .http()
          .post(BASE)
          .set(...bearer(a.accessToken))
          .send(valid(`Writer ${i}`))
          .expect(201);
        const uuid = created.body.data.uuid as string;
        await t
          .http()
          .patch(`${BASE}/${uuid}`)
          .set(...bearer(a.accessToken))
          .send({ quota: 7 })
          .expect(200);
        await t
          .http()
          .delete(`${BASE}/${uuid}`)
          .set(...bearer(a.accessToken))
          .expect(200);
      }
      const pkg = await createPackage(t);
      const before = await countRows(t, 'packages');
      expectFailure(
        (
          await t
            .http()
            .post(BASE)
            .set(...bearer(admin.accessToken))
            .send(valid('Nope'))
            .expect(403)
        ).body,
        403,
      );
      await t
        .http()
        .patch(`${BASE}/${pkg.uuid}`)
        .set(...bearer(admin.accessToken))
        .send({ quota: 1 })
        .expect(403);
      await t
        .http()
        .delete(`${BASE}/${pkg.uuid}`)
        .set(...bearer(admin.accessToken))
        .expect(403);
      await t
        .http()
        .post(BASE)
        .set(...bearer(user.accessToken))
        .send(valid('User'))
        .expect(403);
      expect(await countRows(t, 'packages')).toBe(before);
      const stored = await t.dataSource.getRepository(Package).findOneByOrFail({ uuid: pkg.uuid });
      expect(stored.quota).toBe(pkg.quota);
    });
  });

  it('creates a package with defaults (durationDays 30, public, active) and answers 201', async () => {
    const res = await t
      .http()
      .post(BASE)
      .set(...bearer(superAdmin.accessToken))
      .send({ ...valid('Starter 5k'), description: 'Five thousand messages' })
      .expect(201);
    expect(res.body).toMatchObject({ status: 'success', code: 201, msg: 'Package created' });
    expect(res.body.data).toEqual({
      uuid: expect.any(String),
      name: 'Starter 5k',
      description: 'Five thousand messages',
      quota: 5000,
      price: 250000,
      currency: 'IDR',
      durationDays: 30,
      isPublic: true,
      isActive: true,
      companiesCount: 0,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const got = await t
      .http()
      .get(`${BASE}/${res.body.data.uuid}`)
      .set(...bearer(admin.accessToken))
      .expect(200);
    expect(got.body.data).toEqual(res.body.data);
  });

  it('refuses a taken name (case-insensitively) with 409, on create and on rename', async () => {
    await t
      .http()
      .post(BASE)
      .set(...bearer(superAdmin.accessToken))
      .send(valid('Unique Name'))
      .expect(201);
    const before = await countRows(t, 'packages');
    const res = await t
      .http()
      .post(BASE)
      .set(...bearer(superAdmin.accessToken))
      .send(valid('unique name'))
      .expect(409);
    expectFailure(res.body, 409, 'A package with this name already exists');
    expect(await countRows(t, 'packages')).toBe(before);

    const other = await createPackage(t);
    await t
      .http()
      .patch(`${BASE}/${other.uuid}`)
      .set(...bearer(superAdmin.accessToken))
      .send({ name: 'UNIQUE NAME' })
      .expect(409);
    // Renaming a package to its own name (another case) is fine.
    await t
      .http()
      .patch(`${BASE}/${other.uuid}`)
      .set(...bearer(superAdmin.accessToken))
      .send({ name: other.name.toUpperCase() })
      .expect(200);
  });

  const badBodies: Array<[string, Record<string, unknown>]> = [
    ['missing name', { quota: 1, price: 0, currency: 'IDR' }],
    ['empty name', { name: '   ', quota: 1, price: 0, currency: 'IDR' }],
    ['name over 100', { name: 'x'.repeat(101), quota: 1, price: 0, currency: 'IDR' }],
    ['quota 0', { name: 'Q0', quota: 0, price: 0, currency: 'IDR' }],
    ['quota fractional', { name: 'Q1', quota: 1.5, price: 0, currency: 'IDR' }],
    ['quota as string', { name: 'Q2', quota: '10', price: 0, currency: 'IDR' }],
    ['negative price', { name: 'P1', quota: 1, price: -1, currency: 'IDR' }],
    ['fractional price', { name: 'P2', quota: 1, price: 10.5, currency: 'IDR' }],
    ['lower-case currency', { name: 'C1', quota: 1, price: 0, currency: 'idr' }],
    ['unknown currency', { name: 'C2', quota: 1, price: 0, currency: 'XYZ' }],
    ['4-letter currency', { name: 'C3', quota: 1, price: 0, currency: 'IDRR' }],
    ['durationDays 0', { name: 'D1', quota: 1, price: 0, currency: 'IDR', durationDays: 0 }],
    ['durationDays 3661', { name: 'D2', quota: 1, price: 0, currency: 'IDR', durationDays: 3661 }],
    ['isPublic not boolean', { name: 'B1', quota: 1, price: 0, currency: 'IDR', isPublic: 'yes' }],
    ['unknown field', { name: 'U1', quota: 1, price: 0, currency: 'IDR', companiesCount: 3 }],
  ];

  it.each(badBodies)('POST with %s is a 400 envelope and writes nothing', async (_label, body) => {
    const before = await countRows(t, 'packages');
    const res = await t
      .http()
      .post(BASE)
      .set(...bearer(superAdmin.accessToken))
      .send(body)
      .expect(400);
    expectFailure(res.body, 400);
    expect(await countRows(t, 'packages')).toBe(before);
  });

  it('accepts the boundaries: price 0, durationDays 1 and 3660, name of 100 characters', async () => {
    for (const [name, durationDays] of [
      ['n'.repeat(100), 1],
      ['Long period', 3660],
    ] as const) {
      const res = await t
        .http()
        .post(BASE)
        .set(...bearer(accounting.accessToken))
        .send({ name, quota: 1, price: 0, currency: 'USD', durationDays })
        .expect(201);
      expect(res.body.data).toMatchObject({ price: 0, durationDays, currency: 'USD' });
    }
  });

  it('PATCH refuses bad values (null for a required field, unknown fields, bad uuid) and writes nothing', async () => {
    const pkg = await createPackage(t);
    for (const body of [{ quota: null }, { price: -5 }, { currency: 'usd' }, { name: '' }, { foo: 1 }, [1]]) {
      const res = await t
        .http()
        .patch(`${BASE}/${pkg.uuid}`)
        .set(...bearer(superAdmin.accessToken))
        .send(body);
      expect([res.status, body]).toEqual([400, body]);
      expectFailure(res.body, 400);
    }
    await t
      .http()
      .patch(`${BASE}/not-a-uuid`)
      .set(...bearer(superAdmin.accessToken))
      .send({ quota: 2 })
      .expect(400);
    await t
      .http()
      .patch(`${BASE}/${MISSING}`)
      .set(...bearer(superAdmin.accessToken))
      .send({ quota: 2 })
      .expect(404);
    const stored = await t.dataSource.getRepository(Package).findOneByOrFail({ uuid: pkg.uuid });
    expect(stored).toMatchObject({
      name: pkg.name,
      quota: pkg.quota,
      price: pkg.price,
      currency: pkg.currency,
    });
  });

  it('PATCH changes only the given fields; description null clears it', async () => {
    const pkg = await createPackage(t, { description: 'Old text', durationDays: 90 });
    const res = await t
      .http()
      .patch(`${BASE}/${pkg.uuid}`)
      .set(...bearer(accounting.accessToken))
      .send({ price: 99000, description: null, isPublic: false })
      .expect(200);
    expect(res.body.data).toMatchObject({
      price: 99000,
      description: null,
      isPublic: false,
      durationDays: 90,
      quota: pkg.quota,
      name: pkg.name,
    });
  });

  it('a price change applies to new billings only: existing billings keep their snapshot', async () => {
    const owner = await createActiveUser(t);
    const pkg = await createPackage(t, { price: 100000, quota: 300 });
    const first = await createBilling(t, owner.accessToken, pkg.uuid);
    await t
      .http()
      .patch(`${BASE}/${pkg.uuid}`)
      .set(...bearer(superAdmin.accessToken))
      .send({ price: 120000, quota: 400, name: `${pkg.name} v2` })
      .expect(200);
    const kept = await t
      .http()
      .get(`/api/v1/billings/${first.uuid}`)
      .set(...bearer(owner.accessToken))
      .expect(200);
    expect(kept.body.data).toMatchObject({ amount: 100000, quota: 300, packageName: pkg.name });

    await t
      .http()
      .post(`/api/v1/billings/${first.uuid}/cancel`)
      .set(...bearer(owner.accessToken))
      .expect(200);
    const second = await createBilling(t, owner.accessToken, pkg.uuid);
    expect(second).toMatchObject({ amount: 120000 });
  });

  it('lists with filters, paging and companiesCount', async () => {
    const used = await createPackage(t, { name: 'Counted package' });
    const hidden = await createPackage(t, { name: 'Hidden package', isPublic: false });
    const archived = await createPackage(t, { name: 'Archived package', isActive: false });
    const companies = t.dataSource.getRepository(Company);
    for (let i = 0; i < 2; i++) {
      const u = await createActiveUser(t);
      await companies.update({ uuid: u.companyUuid }, { packageUuid: used.uuid });
    }

    const all = await t
      .http()
      .get(`${BASE}?limit=100`)
      .set(...bearer(admin.accessToken))
      .expect(200);
    const byUuid = new Map(
      (all.body.data.items as Array<{ uuid: string; companiesCount: number }>).map((p) => [p.uuid, p]),
    );
    expect(byUuid.get(used.uuid)?.companiesCount).toBe(2);
    expect(byUuid.get(hidden.uuid)?.companiesCount).toBe(0);
    expect(all.body.data.meta).toMatchObject({ page: 1, limit: 100, totalItems: all.body.data.items.length });

    const inactive = await t
      .http()
      .get(`${BASE}?isActive=false`)
      .set(...bearer(admin.accessToken))
      .expect(200);
    const inactiveUuids = inactive.body.data.items.map((p: { uuid: string }) => p.uuid);
    expect(inactiveUuids).toContain(archived.uuid);
    expect(inactive.body.data.items.every((p: { isActive: boolean }) => !p.isActive)).toBe(true);

    const priv = await t
      .http()
      .get(`${BASE}?isPublic=false`)
      .set(...bearer(admin.accessToken))
      .expect(200);
    expect(priv.body.data.items.map((p: { uuid: string }) => p.uuid)).toContain(hidden.uuid);
    expect(priv.body.data.items.every((p: { isPublic: boolean }) => !p.isPublic)).toBe(true);

    const page = await t
      .http()
      .get(`${BASE}?limit=2&page=2&sort=name:asc`)
      .set(...bearer(admin.accessToken))
      .expect(200);
    expect(page.body.data.items).toHaveLength(2);
    expect(page.body.data.meta).toMatchObject({ page: 2, limit: 2 });

    const searched = await t
      .http()
      .get(`${BASE}?search=counted`)
      .set(...bearer(admin.accessToken))
      .expect(200);
    expect(searched.body.data.items.map((p: { uuid: string }) => p.uuid)).toEqual([used.uuid]);

    for (const q of [
      'limit=0',
      'limit=101',
      'page=0',
      'isActive=maybe',
      'isPublic=1',
      'sort=price:up',
      'sort=secret:asc',
      'foo=1',
    ]) {
      const res = await t
        .http()
        .get(`${BASE}?${q}`)
        .set(...bearer(admin.accessToken));
      expect([q, res.status]).toEqual([q, 400]);
      expectFailure(res.body, 400);
    }
  });

  it('GET :uuid answers 400 for a malformed uuid and 404 for an unknown one', async () => {
    expectFailure(
      (
        await t
          .http()
          .get(`${BASE}/nope`)
          .set(...bearer(admin.accessToken))
          .expect(400)
      ).body,
      400,
    );
    expectFailure(
      (
        await t
          .http()
          .get(`${BASE}/${MISSING}`)
          .set(...bearer(admin.accessToken))
          .expect(404)
      ).body,
      404,
      'Package not found',
    );
  });

  describe('DELETE', () => {
    it('deletes an unused package', async () => {
      const pkg = await createPackage(t);
      const res = await t
        .http()
        .delete(`${BASE}/${pkg.uuid}`)
        .set(...bearer(superAdmin.accessToken))
        .expect(200);
      expect(res.body.data).toEqual({ deleted: true, archived: false });
      expect(await t.dataSource.getRepository(Package).findOneBy({ uuid: pkg.uuid })).toBeNull();
      await t
        .http()
        .delete(`${BASE}/${pkg.uuid}`)
        .set(...bearer(superAdmin.accessToken))
        .expect(404);
    });

    it('archives a package used by a billing (isActive = false, row kept)', async () => {
      const owner = await createActiveUser(t);
      const pkg = await createPackage(t);
      await createBilling(t, owner.accessToken, pkg.uuid);
      const res = await t
        .http()
        .delete(`${BASE}/${pkg.uuid}`)
        .set(...bearer(accounting.accessToken))
        .expect(200);
      expect(res.body.data).toEqual({ deleted: false, archived: true });
      const stored = await t.dataSource.getRepository(Package).findOneByOrFail({ uuid: pkg.uuid });
      expect(stored.isActive).toBe(false);
      // No longer offered to customers.
      const offered = await t
        .http()
        .get('/api/v1/billings/packages')
        .set(...bearer(owner.accessToken))
        .expect(200);
      expect(offered.body.data.items.map((p: { uuid: string }) => p.uuid)).not.toContain(pkg.uuid);
      // A list like the others: paged, with its meta.
      expect(offered.body.data.meta).toEqual({
        page: 1,
        limit: 20,
        totalItems: expect.any(Number),
        totalPages: expect.any(Number),
      });
      const one = await t
        .http()
        .get('/api/v1/billings/packages?limit=1')
        .set(...bearer(owner.accessToken))
        .expect(200);
      expect(one.body.data.items).toHaveLength(Math.min(1, offered.body.data.meta.totalItems));
    });

    it('archives a package that a company subscribes to', async () => {
      const owner = await createActiveUser(t);
      const pkg = await createPackage(t);
      await t.dataSource
        .getRepository(Company)
        .update({ uuid: owner.companyUuid }, { packageUuid: pkg.uuid });
      const res = await t
        .http()
        .delete(`${BASE}/${pkg.uuid}`)
        .set(...bearer(superAdmin.accessToken))
        .expect(200);
      expect(res.body.data).toEqual({ deleted: false, archived: true });
    });

    it('answers 400 for a malformed uuid', async () => {
      await t
        .http()
        .delete(`${BASE}/123`)
        .set(...bearer(superAdmin.accessToken))
        .expect(400);
    });
  });
});
