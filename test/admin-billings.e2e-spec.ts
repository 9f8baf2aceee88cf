import { Billing, BillingStatus } from '../src/modules/billings/entities/billing.entity';
import { Company } from '../src/modules/companies/entities/company.entity';
import { Notification } from '../src/modules/notifications/entities/notification.entity';
import { Package } from '../src/modules/packages/entities/package.entity';
import { User } from '../src/modules/users/entities/user.entity';
import {
  billingRow,
  createBilling,
  createPackage,
  pdfBytes,
  pngBytes,
  setBillingStatus,
} from './support/billing-fixtures';
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

const ADMIN = '/api/v1/admins/billings';
const USER = '/api/v1/billings';
const MISSING = '00000000-0000-4000-8000-000000000000';
const DAY = 86_400_000;

type Owner = RegisteredUser & LoggedIn;

describe('Admin billings /api/v1/admins/billings', () => {
  let t: TestApp;
  let superAdmin: CreatedAdmin;
  let admin: CreatedAdmin;
  let accounting: CreatedAdmin;
  let owner: Owner;

  beforeAll(async () => {
    t = await createTestApp();
    [superAdmin, admin, accounting] = [
      await createAdmin(t, 'superAdmin'),
      await createAdmin(t, 'admin'),
      await createAdmin(t, 'accounting'),
    ];
    owner = await createActiveUser(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const uploadProof = (uuid: string, content = pngBytes(), token = owner.accessToken) =>
    t
      .http()
      .post(`${USER}/${uuid}/proof`)
      .set(...bearer(token))
      .attach('file', content, { filename: 'proof.png', contentType: 'image/png' });

  const approve = (uuid: string, who: CreatedAdmin = accounting, body: object = {}) =>
    t
      .http()
      .post(`${ADMIN}/${uuid}/approve`)
      .set(...bearer(who.accessToken))
      .send(body);
  const reject = (uuid: string, reason = 'Amount does not match', who: CreatedAdmin = accounting) =>
    t
      .http()
      .post(`${ADMIN}/${uuid}/reject`)
      .set(...bearer(who.accessToken))
      .send({ reason });
  const refund = (uuid: string, reason = 'Customer asked', who: CreatedAdmin = accounting) =>
    t
      .http()
      .post(`${ADMIN}/${uuid}/refund`)
      .set(...bearer(who.accessToken))
      .send({ reason });

  const companyOf = (u: Owner) =>
    t.dataSource.getRepository(Company).findOneByOrFail({ uuid: u.companyUuid });
  const relayStatus = async (u: Owner) =>
    (
      await t
        .http()
        .get('/api/v1/users/me')
        .set(...bearer(u.accessToken))
        .expect(200)
    ).body.data.company.relayStatus as string;

  it('manual path: billing → proof → accounting approves → subscription active with the package quota', async () => {
    const u = await createActiveUser(t);
    expect(await relayStatus(u)).toBe('no_package');
    const pkg = await createPackage(t, { quota: 777, durationDays: 30, price: 300000 });
    const billing = await createBilling(t, u.accessToken, pkg.uuid, 'manual');
    await uploadProof(billing.uuid, pngBytes(), u.accessToken).expect(200);

    const queue = await t
      .http()
      .get(`${ADMIN}?status=awaiting_review&limit=100`)
      .set(...bearer(accounting.accessToken))
      .expect(200);
    expect(queue.body.data.items.map((b: { uuid: string }) => b.uuid)).toContain(billing.uuid);

    const res = await approve(billing.uuid, accounting, { note: 'Matched the bank statement' }).expect(200);
    expect(res.body).toMatchObject({ status: 'success', code: 200, msg: 'Billing approved' });
    expect(res.body.data).toMatchObject({
      uuid: billing.uuid,
      status: 'paid',
      paidAmount: 300000,
      paidAt: expect.any(String),
      reviewNote: 'Matched the bank statement',
      reviewedByAdminUuid: accounting.uuid,
      company: { uuid: u.companyUuid, name: 'Acme Mail' },
    });

    expect(await relayStatus(u)).toBe('active');
    const company = await companyOf(u);
    expect(company).toMatchObject({ packageUuid: pkg.uuid, quota: 777, used: 0 });
    expect(company.periodEnd!.getTime() - company.periodStart!.getTime()).toBe(30 * DAY);
    expect(company.periodStart!.toISOString()).toBe(res.body.data.paidAt);

    const userRow = await t.dataSource.getRepository(User).findOneByOrFail({ uuid: u.userUuid });
    const paidNote = await t.dataSource
      .getRepository(Notification)
      .findOneBy({ userId: userRow.id, type: 'billing.paid' });
    expect(paidNote).not.toBeNull();

    // Approving again is a 409.
    expectFailure(
      (await approve(billing.uuid).expect(409)).body,
      409,
      'Cannot approve a billing that is paid',
    );
  });

  it('reject → the customer is notified and e-mailed, uploads again → approve', async () => {
    const u = await createActiveUser(t);
    const pkg = await createPackage(t, { quota: 50 });
    const billing = await createBilling(t, u.accessToken, pkg.uuid, 'manual');
    await uploadProof(billing.uuid, pngBytes(), u.accessToken).expect(200);

    const rejected = await reject(billing.uuid, 'The transfer amount is 10 short').expect(200);
    expect(rejected.body.data).toMatchObject({
      status: 'pending',
      rejectedReason: 'The transfer amount is 10 short',
      proofFile: null,
    });
    expect((await billingRow(t, billing.uuid)).proofContent).toBeNull();

    const userRow = await t.dataSource.getRepository(User).findOneByOrFail({ uuid: u.userUuid });
    const note = await t.dataSource
      .getRepository(Notification)
      .findOneByOrFail({ userId: userRow.id, type: 'billing.rejected' });
    expect(note.body).toContain('The transfer amount is 10 short');
    const mail = await t.smtp.waitFor(u.email, /rejected/i);
    expect(mail.text).toContain('The transfer amount is 10 short');

    const seen = await t
      .http()
      .get(`${USER}/${billing.uuid}`)
      .set(...bearer(u.accessToken))
      .expect(200);
    expect(seen.body.data).toMatchObject({
      status: 'pending',
      rejectedReason: 'The transfer amount is 10 short',
    });

    const pdf = pdfBytes();
    const again = await uploadProof(billing.uuid, pdf, u.accessToken).expect(200);
    expect(again.body.data).toMatchObject({
      status: 'awaiting_review',
      proofFile: { type: 'application/pdf' },
    });
    await approve(billing.uuid, superAdmin).expect(200);
    expect(await relayStatus(u)).toBe('active');
    expect((await companyOf(u)).quota).toBe(50);
  });

  it('reject re-opens the payment window of a billing about to expire', async () => {
    const b = await createBilling(t, owner.accessToken, (await createPackage(t)).uuid);
    await uploadProof(b.uuid).expect(200);
    await t.dataSource
      .getRepository(Billing)
      .update({ uuid: b.uuid }, { expiresAt: new Date(Date.now() - DAY) });
    const res = await reject(b.uuid).expect(200);
    expect(Date.parse(res.body.data.expiresAt)).toBeGreaterThan(Date.now() + DAY);
  });

  it('refund: paid → refunded with the reason; the subscription is unchanged', async () => {
    const u = await createActiveUser(t);
    const billing = await createBilling(
      t,
      u.accessToken,
      (await createPackage(t, { quota: 90 })).uuid,
      'manual',
    );
    await approve(billing.uuid).expect(200);
    const before = await companyOf(u);
    const res = await refund(billing.uuid, 'Duplicate transfer').expect(200);
    expect(res.body.data).toMatchObject({
      status: 'refunded',
      refundReason: 'Duplicate transfer',
      paidAmount: billing.amount,
    });
    const after = await companyOf(u);
    expect(after).toMatchObject({ packageUuid: before.packageUuid, quota: 90 });
    expect(after.periodEnd!.getTime()).toBe(before.periodEnd!.getTime());
    expectFailure(
      (await refund(billing.uuid).expect(409)).body,
      409,
      'Cannot refund a billing that is refunded',
    );
  });

  describe('every transition not drawn is a 409 and changes nothing', () => {
    const STATES: BillingStatus[] = [
      'pending',
      'awaiting_review',
      'paid',
      'refunded',
      'expired',
      'cancelled',
    ];
    type Action = 'approve' | 'reject' | 'refund' | 'cancel' | 'upload';
    const ALLOWED: Record<Action, BillingStatus[]> = {
      approve: ['pending', 'awaiting_review'],
      reject: ['awaiting_review'],
      refund: ['paid'],
      cancel: ['pending'],
      upload: ['pending'],
    };
    const AFTER: Record<Action, BillingStatus> = {
      approve: 'paid',
      reject: 'pending',
      refund: 'refunded',
      cancel: 'cancelled',
      upload: 'awaiting_review',
    };
    const cases = (Object.keys(ALLOWED) as Action[]).flatMap((action) =>
      STATES.map((state) => [action, state] as const),
    );

    it.each(cases)('%s from %s', async (action, state) => {
      const b = await createBilling(t, owner.accessToken, (await createPackage(t)).uuid, 'manual');
      await setBillingStatus(t, b.uuid, state);
      const send: Record<Action, () => ReturnType<typeof approve>> = {
        approve: () => approve(b.uuid),
        reject: () => reject(b.uuid),
        refund: () => refund(b.uuid),
        cancel: () =>
          t
            .http()
            .post(`${USER}/${b.uuid}/cancel`)
            .set(...bearer(owner.accessToken)),
        upload: () => uploadProof(b.uuid),
      };
      const res = await send[action]();
      if (ALLOWED[action].includes(state)) {
        expect(res.status).toBe(200);
        expect(res.body.data.status).toBe(AFTER[action]);
      } else {
        expect(res.status).toBe(409);
        expectFailure(res.body, 409, /^Cannot /);
        const row = await billingRow(t, b.uuid);
        expect(row.status).toBe(state);
        expect(row.paidAt).toBeNull();
        expect(row.proofContent).toBeNull();
      }
    });
  });

  describe('role matrix', () => {
    it('admin may read (list, get, proof) but not approve, reject, refund or read revenue (403)', async () => {
      const b = await createBilling(t, owner.accessToken, (await createPackage(t)).uuid);
      await uploadProof(b.uuid).expect(200);
      await t
        .http()
        .get(ADMIN)
        .set(...bearer(admin.accessToken))
        .expect(200);
      const one = await t
        .http()
        .get(`${ADMIN}/${b.uuid}`)
        .set(...bearer(admin.accessToken))
        .expect(200);
      expect(one.body.data.company).toEqual({ uuid: owner.companyUuid, name: 'Acme Mail' });
      await t
        .http()
        .get(`${ADMIN}/${b.uuid}/proof`)
        .set(...bearer(admin.accessToken))
        .expect(200);
      expectFailure((await approve(b.uuid, admin).expect(403)).body, 403);
      await reject(b.uuid, 'no', admin).expect(403);
      await refund(b.uuid, 'no', admin).expect(403);
      await t
        .http()
        .get(`${ADMIN}/summary?from=2026-01-01&to=2026-01-31`)
        .set(...bearer(admin.accessToken))
        .expect(403);
      await t
        .http()
        .get('/api/v1/admins/reports/revenue?from=2026-01-01&to=2026-01-31')
        .set(...bearer(admin.accessToken))
        .expect(403);
      expect((await billingRow(t, b.uuid)).status).toBe('awaiting_review');
    });

    it('superAdmin and accounting approve, reject and refund; users and anonymous callers are refused', async () => {
      for (const who of [superAdmin, accounting]) {
        const b = await createBilling(t, owner.accessToken, (await createPackage(t)).uuid);
        await uploadProof(b.uuid).expect(200);
        await reject(b.uuid, 'blurry', who).expect(200);
        await uploadProof(b.uuid).expect(200);
        await approve(b.uuid, who).expect(200);
        await refund(b.uuid, 'test', who).expect(200);
        await t
          .http()
          .get(`${ADMIN}/summary?from=2026-01-01&to=2026-01-31`)
          .set(...bearer(who.accessToken))
          .expect(200);
      }
      const b = await createBilling(t, owner.accessToken, (await createPackage(t)).uuid);
      await t
        .http()
        .get(ADMIN)
        .set(...bearer(owner.accessToken))
        .expect(403);
      await t
        .http()
        .post(`${ADMIN}/${b.uuid}/approve`)
        .set(...bearer(owner.accessToken))
        .send({})
        .expect(403);
      await t.http().get(ADMIN).expect(401);
      await t.http().post(`${ADMIN}/${b.uuid}/approve`).send({}).expect(401);
      expect((await billingRow(t, b.uuid)).status).toBe('pending');
    });
  });

  describe('bad input: 400 envelope, nothing written', () => {
    let b: { uuid: string };
    beforeAll(async () => {
      b = await createBilling(t, owner.accessToken, (await createPackage(t)).uuid);
      await uploadProof(b.uuid).expect(200);
    });

    const bodies: Array<[string, string, unknown]> = [
      ['reject', 'without reason', {}],
      ['reject', 'with an empty reason', { reason: '   ' }],
      ['reject', 'with a reason over 1000', { reason: 'x'.repeat(1001) }],
      ['reject', 'with a numeric reason', { reason: 5 }],
      ['reject', 'with an unknown field', { reason: 'ok', status: 'paid' }],
      ['approve', 'with a note over 1000', { note: 'x'.repeat(1001) }],
      ['approve', 'with an unknown field', { paidAmount: 1 }],
      ['approve', 'with an array body', [1]],
      ['refund', 'without reason', {}],
    ];
    it.each(bodies)('%s %s', async (action, _label, body) => {
      const res = await t
        .http()
        .post(`${ADMIN}/${b.uuid}/${action}`)
        .set(...bearer(accounting.accessToken))
        .send(body as object)
        .expect(400);
      expectFailure(res.body, 400);
      const row = await billingRow(t, b.uuid);
      expect(row).toMatchObject({
        status: 'awaiting_review',
        rejectedReason: null,
        paidAt: null,
        reviewNote: null,
      });
    });

    it('malformed uuids are 400, unknown ones 404', async () => {
      for (const path of [`${ADMIN}/nope`, `${ADMIN}/nope/proof`]) {
        await t
          .http()
          .get(path)
          .set(...bearer(accounting.accessToken))
          .expect(400);
      }
      await t
        .http()
        .post(`${ADMIN}/nope/approve`)
        .set(...bearer(accounting.accessToken))
        .send({})
        .expect(400);
      for (const path of [`${ADMIN}/${MISSING}`, `${ADMIN}/${MISSING}/proof`]) {
        expectFailure(
          (
            await t
              .http()
              .get(path)
              .set(...bearer(accounting.accessToken))
              .expect(404)
          ).body,
          404,
        );
      }
      await approve(MISSING).expect(404);
      await reject(MISSING).expect(404);
      await refund(MISSING).expect(404);
    });

    it.each([
      'status=done',
      'method=cash',
      'companyUuid=abc',
      'from=yesterday',
      'to=2026-13-01',
      'from=2026-02-30',
      'from=2026-03-01&to=2026-02-01',
      'limit=500',
      'sort=uuid:asc',
      'bogus=1',
    ])('GET / with %s is a 400', async (q) => {
      const res = await t
        .http()
        .get(`${ADMIN}?${q}`)
        .set(...bearer(admin.accessToken))
        .expect(400);
      expectFailure(res.body, 400);
    });

    it.each([
      '',
      'from=2026-01-01',
      'to=2026-01-01',
      'from=2026-02-01&to=2026-01-01',
      'from=2025-01-01&to=2026-01-02',
      'from=2026-01-01&to=2026-01-31&interval=week',
      'from=2026-01-01&to=nope',
    ])('GET /summary with "%s" is a 400', async (q) => {
      const res = await t
        .http()
        .get(`${ADMIN}/summary?${q}`)
        .set(...bearer(accounting.accessToken))
        .expect(400);
      expectFailure(res.body, 400);
    });
  });

  it('shows externalId (what the gateway echoes back) on GET and in the list', async () => {
    const u = await createActiveUser(t);
    const made = await createBilling(t, u.accessToken, (await createPackage(t)).uuid, 'gateway');
    const { externalId } = await billingRow(t, made.uuid);
    expect(externalId).toBe(made.number);

    const one = await t
      .http()
      .get(`${ADMIN}/${made.uuid}`)
      .set(...bearer(admin.accessToken))
      .expect(200);
    expect(one.body.data.externalId).toBe(externalId);
    const list = await t
      .http()
      .get(`${ADMIN}?companyUuid=${u.companyUuid}`)
      .set(...bearer(admin.accessToken))
      .expect(200);
    expect(list.body.data.items.map((b: { externalId: string }) => b.externalId)).toEqual([externalId]);
  });

  it('lists with filters: status, companyUuid, method, from/to, newest first', async () => {
    const u = await createActiveUser(t);
    const gw = await createBilling(t, u.accessToken, (await createPackage(t)).uuid, 'gateway');
    const man = await createBilling(t, u.accessToken, (await createPackage(t)).uuid, 'manual');
    const mine = await t
      .http()
      .get(`${ADMIN}?companyUuid=${u.companyUuid}`)
      .set(...bearer(admin.accessToken))
      .expect(200);
    expect(mine.body.data.items.map((b: { uuid: string }) => b.uuid)).toEqual([man.uuid, gw.uuid]);
    expect(mine.body.data.meta).toEqual({ page: 1, limit: 20, totalItems: 2, totalPages: 1 });
    expect(mine.body.data.items[0]).toMatchObject({ company: { uuid: u.companyUuid }, method: 'manual' });
    expect(mine.body.data.items[0]).not.toHaveProperty('proofContent');

    const gateway = await t
      .http()
      .get(`${ADMIN}?companyUuid=${u.companyUuid}&method=gateway`)
      .set(...bearer(admin.accessToken))
      .expect(200);
    expect(gateway.body.data.items.map((b: { uuid: string }) => b.uuid)).toEqual([gw.uuid]);

    const today = new Date().toISOString().slice(0, 10);
    const inRange = await t
      .http()
      .get(`${ADMIN}?companyUuid=${u.companyUuid}&from=${today}&to=${today}`)
      .set(...bearer(admin.accessToken))
      .expect(200);
    expect(inRange.body.data.meta.totalItems).toBe(2);
    const future = await t
      .http()
      .get(`${ADMIN}?companyUuid=${u.companyUuid}&from=2999-01-01T00:00:00Z`)
      .set(...bearer(admin.accessToken))
      .expect(200);
    expect(future.body.data.meta.totalItems).toBe(0);

    const cancelled = await t
      .http()
      .get(`${ADMIN}?companyUuid=${u.companyUuid}&status=cancelled`)
      .set(...bearer(admin.accessToken))
      .expect(200);
    expect(cancelled.body.data.items).toEqual([]);
    const byAmount = await t
      .http()
      .get(`${ADMIN}?companyUuid=${u.companyUuid}&sort=createdAt:asc`)
      .set(...bearer(admin.accessToken))
      .expect(200);
    expect(byAmount.body.data.items.map((b: { uuid: string }) => b.uuid)).toEqual([gw.uuid, man.uuid]);
  });

  describe('summary and revenue report', () => {
    let window: { paid: number };

    /** A billing placed in 2020 directly in the database: no other test writes there. */
    async function historic(
      currency: string,
      amount: number,
      status: BillingStatus,
      createdAt: string,
      paidAt: string | null,
    ): Promise<void> {
      const pkg = await createPackage(t, { currency, price: amount });
      const b = await createBilling(t, owner.accessToken, pkg.uuid);
      const billings = t.dataSource.getRepository(Billing);
      await billings.update(
        { uuid: b.uuid },
        {
          status,
          createdAt: new Date(createdAt),
          paidAt: paidAt ? new Date(paidAt) : null,
          paidAmount: paidAt ? amount : null,
        },
      );
    }

    beforeAll(async () => {
      await historic('IDR', 100000, 'paid', '2020-01-09T10:00:00Z', '2020-01-10T08:00:00Z');
      await historic('IDR', 50000, 'paid', '2020-01-19T10:00:00Z', '2020-01-20T23:59:59Z');
      await historic('USD', 1500, 'paid', '2020-02-04T10:00:00Z', '2020-02-05T00:00:00Z');
      await historic('IDR', 70000, 'refunded', '2020-02-09T10:00:00Z', '2020-02-10T12:00:00Z');
      await historic('IDR', 20000, 'pending', '2020-03-01T10:00:00Z', null);
      await historic('IDR', 9999, 'paid', '2019-12-30T10:00:00Z', '2019-12-31T23:59:59Z');
      await historic('IDR', 8888, 'paid', '2020-03-31T10:00:00Z', '2020-04-01T00:00:00Z');
      await historic('IDR', 7777, 'cancelled', '2020-04-01T00:00:00Z', null);
      window = { paid: 4 };
    });

    it('reports revenue per month and currency, refunds apart, totals and counts per status', async () => {
      const res = await t
        .http()
        .get(`${ADMIN}/summary?from=2020-01-01&to=2020-03-31`)
        .set(...bearer(accounting.accessToken))
        .expect(200);
      expect(res.body.data).toEqual({
        from: '2020-01-01T00:00:00.000Z',
        to: '2020-04-01T00:00:00.000Z',
        interval: 'month',
        revenue: [
          { period: '2020-01', currency: 'IDR', amount: 150000, count: 2 },
          { period: '2020-02', currency: 'USD', amount: 1500, count: 1 },
        ],
        refunds: [{ period: '2020-02', currency: 'IDR', amount: 70000, count: 1 }],
        totals: [
          { currency: 'IDR', revenue: 150000, paidCount: 2, refunded: 70000, refundedCount: 1 },
          { currency: 'USD', revenue: 1500, paidCount: 1, refunded: 0, refundedCount: 0 },
        ],
        counts: { pending: 1, awaiting_review: 0, paid: window.paid, refunded: 1, expired: 0, cancelled: 0 },
      });
    });

    it('groups by day, and takes timestamps for from/to', async () => {
      const res = await t
        .http()
        .get(`${ADMIN}/summary?from=2020-01-01T00:00:00Z&to=2020-02-29T23:59:59.999Z&interval=day`)
        .set(...bearer(superAdmin.accessToken))
        .expect(200);
      expect(res.body.data.revenue).toEqual([
        { period: '2020-01-10', currency: 'IDR', amount: 100000, count: 1 },
        { period: '2020-01-20', currency: 'IDR', amount: 50000, count: 1 },
        { period: '2020-02-05', currency: 'USD', amount: 1500, count: 1 },
      ]);
      expect(res.body.data.refunds).toEqual([
        { period: '2020-02-10', currency: 'IDR', amount: 70000, count: 1 },
      ]);
    });

    it('GET /admins/reports/revenue answers the same as the billings summary', async () => {
      const q = 'from=2020-01-01&to=2020-12-31&interval=month';
      const summary = await t
        .http()
        .get(`${ADMIN}/summary?${q}`)
        .set(...bearer(accounting.accessToken))
        .expect(200);
      const report = await t
        .http()
        .get(`/api/v1/admins/reports/revenue?${q}`)
        .set(...bearer(accounting.accessToken))
        .expect(200);
      expect(report.body.data).toEqual(summary.body.data);
      expect(report.body.data.revenue).toContainEqual({
        period: '2020-04',
        currency: 'IDR',
        amount: 8888,
        count: 1,
      });
      await t
        .http()
        .get('/api/v1/admins/reports/revenue?from=2020-01-01')
        .set(...bearer(accounting.accessToken))
        .expect(400);
    });

    it('accepts a window of exactly 366 days', async () => {
      await t
        .http()
        .get(`${ADMIN}/summary?from=2020-01-01&to=2020-12-31`)
        .set(...bearer(accounting.accessToken))
        .expect(200);
    });
  });

  it('package snapshot: approving after a package change still grants the billed quota', async () => {
    const u = await createActiveUser(t);
    const pkg = await createPackage(t, { quota: 10, durationDays: 7 });
    const b = await createBilling(t, u.accessToken, pkg.uuid, 'manual');
    await t.dataSource.getRepository(Package).update({ uuid: pkg.uuid }, { quota: 99999, durationDays: 365 });
    await approve(b.uuid).expect(200);
    const c = await companyOf(u);
    expect(c.quota).toBe(10);
    expect(c.periodEnd!.getTime() - c.periodStart!.getTime()).toBe(7 * DAY);
  });
});
