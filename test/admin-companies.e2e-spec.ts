import { createHash } from 'node:crypto';
import { EncryptionService } from '../src/common/crypto/encryption.service';
import { Admin } from '../src/modules/admins/entities/admin.entity';
import { Billing } from '../src/modules/billings/entities/billing.entity';
import { CompanyAuditEvent } from '../src/modules/companies/entities/company-audit-event.entity';
import { Company } from '../src/modules/companies/entities/company.entity';
import { relayPasswordDigest } from '../src/modules/companies/relay-credentials';
import { Notification } from '../src/modules/notifications/entities/notification.entity';
import { Package } from '../src/modules/packages/entities/package.entity';
import {
  bearer,
  countAll,
  createActiveUser,
  createAdmin,
  CreatedAdmin,
  expectFailure,
  LoggedIn,
  RegisteredUser,
  registerUser,
} from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const DAY = 86_400_000;
const PUBLIC_URL = 'https://relay.example.test';
const BASE = '/api/v1/admins/companies';

describe('Admin company routes (/api/v1/admins/companies)', () => {
  let t: TestApp;
  let superAdmin: CreatedAdmin;
  let admin: CreatedAdmin;
  let accounting: CreatedAdmin;
  let owner: RegisteredUser & LoggedIn;
  let starter: Package;
  let archived: Package;

  beforeAll(async () => {
    t = await createTestApp({ env: { PUBLIC_URL } });
    superAdmin = await createAdmin(t, 'superAdmin');
    admin = await createAdmin(t, 'admin');
    accounting = await createAdmin(t, 'accounting');
    owner = await createActiveUser(t);
    const packages = t.dataSource.getRepository(Package);
    starter = await packages.save(
      packages.create({
        name: 'Admin Starter',
        quota: 100,
        price: 150000,
        currency: 'IDR',
        durationDays: 30,
      }),
    );
    archived = await packages.save(
      packages.create({ name: 'Old Plan', quota: 50, price: 1000, currency: 'IDR', isActive: false }),
    );
  });
  afterAll(async () => {
    await t.close();
  });

  const companies = () => t.dataSource.getRepository(Company);
  const companyRow = (uuid: string) =>
    companies()
      .createQueryBuilder('c')
      .addSelect(['c.relayPasswordHash', 'c.scriptTokenHash', 'c.scriptTokenCipher'])
      .where('c.uuid = :uuid', { uuid })
      .getOneOrFail();
  const auditOf = async (uuid: string) => {
    const company = await companyRow(uuid);
    return t.dataSource
      .getRepository(CompanyAuditEvent)
      .find({ where: { companyId: company.id }, order: { id: 'ASC' } });
  };
  const tables = () =>
    countAll(t, ['users', 'contacts', 'companies', 'company_audit_events', 'notifications', 'billings']);
  const adminId = async (a: CreatedAdmin) =>
    (await t.dataSource.getRepository(Admin).findOneByOrFail({ uuid: a.uuid })).id;
  const as = (a: { accessToken: string }) => bearer(a.accessToken);

  /** A company whose name and state are set directly, for the list filters. */
  async function companyIn(name: string, state: Partial<Company>): Promise<RegisteredUser> {
    const user = await registerUser(t);
    await companies().update({ uuid: user.companyUuid }, { name, ...state });
    return user;
  }

  it('registration notifies every superAdmin and admin (not accounting) with company.registered', async () => {
    const user = await registerUser(t);
    const notes = await t.dataSource
      .getRepository(Notification)
      .find({ where: { type: 'company.registered' } });
    const mine = notes.filter((n) => n.data?.companyUuid === user.companyUuid);
    expect(mine.map((n) => n.adminId).sort()).toEqual(
      [await adminId(superAdmin), await adminId(admin)].sort(),
    );
    expect(mine[0]).toMatchObject({ userId: null, title: 'New company: Acme Mail' });
    expect(mine[0].body).toContain(user.email);
  });

  describe('list', () => {
    const tag = `zz${Date.now().toString(36)}`;
    const states: Record<string, Partial<Company>> = {};
    const made: Record<string, RegisteredUser> = {};

    beforeAll(async () => {
      const future = new Date(Date.now() + 10 * DAY);
      const past = new Date(Date.now() - DAY);
      const paid = { packageUuid: starter.uuid, periodStart: new Date(Date.now() - 5 * DAY), quota: 100 };
      Object.assign(states, {
        suspended: { ...paid, periodEnd: future, used: 1, status: 'suspended' as const },
        no_package: {},
        expired: { ...paid, periodEnd: past, used: 500 },
        quota_exceeded: { ...paid, periodEnd: future, used: 100 },
        active: { ...paid, periodEnd: future, used: 99 },
      });
      for (const [relayStatus, state] of Object.entries(states)) {
        made[relayStatus] = await companyIn(`${tag} ${relayStatus}`, state);
      }
    });

    const list = (query: Record<string, string | number>, caller: CreatedAdmin = accounting) =>
      t
        .http()
        .get(BASE)
        .query(query)
        .set(...as(caller));

    it('is open to every admin role and pages with meta', async () => {
      for (const caller of [superAdmin, admin, accounting]) {
        const res = await list({ search: tag, limit: 2 }, caller).expect(200);
        expect(res.body.data.meta).toEqual({ page: 1, limit: 2, totalItems: 5, totalPages: 3 });
        expect(res.body.data.items).toHaveLength(2);
      }
      const last = await list({ search: tag, limit: 2, page: 3 }).expect(200);
      expect(last.body.data.items).toHaveLength(1);
      const item = last.body.data.items[0];
      expect(Object.keys(item).sort()).toEqual(
        [
          'uuid',
          'name',
          'legalName',
          'taxId',
          'address',
          'city',
          'country',
          'phone',
          'website',
          'status',
          'suspendedReason',
          'relayUsername',
          'relayStatus',
          'mailboxSuite',
          'allowedIps',
          'subscription',
          'createdAt',
        ].sort(),
      );
    });

    it.each(['suspended', 'no_package', 'expired', 'quota_exceeded', 'active'])(
      'filters relayStatus=%s in SQL with the rules of deriveRelayStatus',
      async (relayStatus) => {
        const res = await list({ search: tag, relayStatus }).expect(200);
        expect(res.body.data.items.map((c: { uuid: string }) => c.uuid)).toEqual([
          made[relayStatus].companyUuid,
        ]);
        expect(res.body.data.items[0].relayStatus).toBe(relayStatus);
        expect(res.body.data.meta.totalItems).toBe(1);
      },
    );

    it('filters by status and packageUuid, and searches name, relay username and user e-mail', async () => {
      const suspended = await list({ search: tag, status: 'suspended' }).expect(200);
      expect(suspended.body.data.items.map((c: { uuid: string }) => c.uuid)).toEqual([
        made.suspended.companyUuid,
      ]);

      const byPackage = await list({ search: tag, packageUuid: starter.uuid, sort: 'name:asc' }).expect(200);
      expect(byPackage.body.data.items.map((c: { name: string }) => c.name)).toEqual(
        ['active', 'expired', 'quota_exceeded', 'suspended'].map((s) => `${tag} ${s}`),
      );
      expect(byPackage.body.data.items[0].subscription).toMatchObject({
        packageUuid: starter.uuid,
        packageName: 'Admin Starter',
        quota: 100,
        used: 99,
        remaining: 1,
      });

      const target = made.expired;
      const { relayUsername } = await companyRow(target.companyUuid);
      for (const search of [relayUsername.toUpperCase(), target.email.toUpperCase(), `${tag} EXPIRED`]) {
        const res = await list({ search }).expect(200);
        expect([search, res.body.data.items.map((c: { uuid: string }) => c.uuid)]).toEqual([
          search,
          [target.companyUuid],
        ]);
      }
      // LIKE wildcards are matched literally.
      const wildcard = await list({ search: '%' }).expect(200);
      expect(wildcard.body.data.meta.totalItems).toBe(0);
      const none = await list({ search: tag, packageUuid: archived.uuid }).expect(200);
      expect(none.body.data.items).toEqual([]);
    });

    it('sorts by whitelisted fields only', async () => {
      const desc = await list({ search: tag, sort: 'used:desc' }).expect(200);
      expect(
        desc.body.data.items.map((c: { subscription: { used: number } }) => c.subscription.used),
      ).toEqual([500, 100, 99, 1, 0]);
      const byEnd = await list({ search: tag, sort: 'periodEnd:asc' }).expect(200);
      expect(byEnd.body.data.items[0].uuid).toBe(made.expired.companyUuid);
      expect(byEnd.body.data.items.at(-1).uuid).toBe(made.no_package.companyUuid);
    });

    it.each<Record<string, string | number>>([
      { status: 'deleted' },
      { relayStatus: 'unknown' },
      { packageUuid: 'not-a-uuid' },
      { sort: 'relayPasswordHash:asc' },
      { sort: 'name' },
      { page: 0 },
      { limit: 101 },
      { limit: 'ten' },
      { search: 'x'.repeat(101) },
      { color: 'blue' },
    ])('refuses %p with 400', async (query) => {
      const res = await list(query).expect(400);
      expectFailure(res.body, 400);
    });
  });

  describe('detail', () => {
    it('shows the company as customers see it, with its users, domainsCount and lastBilling', async () => {
      const user = await createActiveUser(t);
      const res = await t
        .http()
        .get(`${BASE}/${user.companyUuid}`)
        .set(...as(accounting))
        .expect(200);
      const customer = await t
        .http()
        .get(`/api/v1/companies/${user.companyUuid}`)
        .set(...bearer(user.accessToken))
        .expect(200);
      expect(res.body.data).toEqual({
        ...customer.body.data,
        crmAccountId: null,
        users: [
          expect.objectContaining({
            uuid: user.userUuid,
            email: user.email,
            role: 'owner',
            status: 'active',
            contact: expect.objectContaining({ fullName: 'Ada Owner' }),
          }),
        ],
        domainsCount: 0,
        lastBilling: null,
      });

      const company = await companyRow(user.companyUuid);
      const billings = t.dataSource.getRepository(Billing);
      const bill = (n: number, createdAt: Date) =>
        billings.save(
          billings.create({
            number: `INV/ADM/${process.pid}/${user.companyUuid.slice(0, 8)}/${n}`,
            externalId: `ext-${user.companyUuid}-${n}`,
            companyId: company.id,
            packageId: starter.id,
            packageName: starter.name,
            packageQuota: starter.quota,
            packageDurationDays: 30,
            amount: starter.price,
            currency: 'IDR',
            method: 'manual',
            status: n === 1 ? 'paid' : 'pending',
            expiresAt: new Date(Date.now() + DAY),
            createdAt,
          }),
        );
      await bill(1, new Date(Date.now() - 2 * DAY));
      const latest = await bill(2, new Date());
      const withBilling = await t
        .http()
        .get(`${BASE}/${user.companyUuid}`)
        .set(...as(admin))
        .expect(200);
      expect(withBilling.body.data.lastBilling).toEqual({
        uuid: latest.uuid,
        number: latest.number,
        packageName: 'Admin Starter',
        amount: 150000,
        currency: 'IDR',
        method: 'manual',
        status: 'pending',
        paidAt: null,
        createdAt: expect.any(String),
      });
    });

    it('answers 404 for an unknown company and 400 for a malformed uuid', async () => {
      const missing = await t
        .http()
        .get(`${BASE}/00000000-0000-4000-8000-000000000000`)
        .set(...as(superAdmin))
        .expect(404);
      expectFailure(missing.body, 404, 'Company not found');
      const bad = await t
        .http()
        .get(`${BASE}/not-a-uuid`)
        .set(...as(superAdmin))
        .expect(400);
      expectFailure(bad.body, 400);
    });
  });

  describe('PATCH', () => {
    const patch = (uuid: string, body: object, caller: CreatedAdmin = admin) =>
      t
        .http()
        .patch(`${BASE}/${uuid}`)
        .set(...as(caller))
        .send(body);

    it('suspends with a reason: users (e-mailed) and admins/superAdmins notified, audited; reactivating clears the reason', async () => {
      const user = await createActiveUser(t);
      const res = await patch(user.companyUuid, {
        status: 'suspended',
        suspendedReason: 'Spam complaints',
      }).expect(200);
      expect(res.body.data).toMatchObject({
        status: 'suspended',
        suspendedReason: 'Spam complaints',
        relayStatus: 'suspended',
      });
      expect(await companyRow(user.companyUuid)).toMatchObject({
        status: 'suspended',
        suspendedReason: 'Spam complaints',
      });

      const notes = await t.dataSource
        .getRepository(Notification)
        .find({ where: { type: 'company.suspended' } });
      const mine = notes.filter((n) => n.data?.companyUuid === user.companyUuid);
      const ownerRow = await t.dataSource.query(`SELECT id FROM users WHERE email = '${user.email}'`);
      expect(mine.filter((n) => n.userId !== null).map((n) => n.userId)).toEqual([ownerRow[0].id]);
      expect(
        mine
          .filter((n) => n.adminId !== null)
          .map((n) => n.adminId)
          .sort(),
      ).toEqual([await adminId(superAdmin), await adminId(admin)].sort());
      const mail = await t.smtp.waitFor(user.email, /suspended/i);
      expect(mail.text).toContain('Spam complaints');

      // Suspending does not block login (auth.md).
      await t
        .http()
        .post('/api/v1/users/login')
        .send({ email: user.email, password: user.password })
        .expect(200);

      const again = await patch(user.companyUuid, { suspendedReason: 'Spam complaints (confirmed)' }).expect(
        200,
      );
      expect(again.body.data.suspendedReason).toBe('Spam complaints (confirmed)');
      const active = await patch(user.companyUuid, { status: 'active' }).expect(200);
      expect(active.body.data).toMatchObject({
        status: 'active',
        suspendedReason: null,
        relayStatus: 'no_package',
      });

      const audit = await auditOf(user.companyUuid);
      expect(audit.map((a) => [a.action, a.adminUuid])).toEqual([
        ['status.changed', admin.uuid],
        ['suspension.reason_changed', admin.uuid],
        ['status.changed', admin.uuid],
      ]);
      expect(audit[0].detail).toEqual({ from: 'active', to: 'suspended', reason: 'Spam complaints' });
      // Only the suspension notified; the reactivation and the reason change did not.
      const after = await t.dataSource
        .getRepository(Notification)
        .find({ where: { type: 'company.suspended' } });
      expect(after.filter((n) => n.data?.companyUuid === user.companyUuid)).toHaveLength(3);
    });

    it('assigns a package without payment (a period starts now, audited), then overrides quota and extends periodEnd', async () => {
      const user = await createActiveUser(t);
      const before = Date.now();
      const res = await patch(user.companyUuid, { packageUuid: starter.uuid }, superAdmin).expect(200);
      expect(res.body.data).toMatchObject({
        relayStatus: 'active',
        subscription: {
          packageUuid: starter.uuid,
          packageName: 'Admin Starter',
          quota: 100,
          used: 0,
          remaining: 100,
        },
      });
      let row = await companyRow(user.companyUuid);
      expect(row.periodStart!.getTime()).toBeGreaterThanOrEqual(before - 1000);
      expect(row.periodEnd!.getTime() - row.periodStart!.getTime()).toBe(30 * DAY);
      expect(await t.dataSource.getRepository(Billing).count({ where: { companyId: row.id } })).toBe(0);

      await companies().update({ id: row.id }, { used: 90, quotaWarnedAt80: new Date() });
      const newEnd = new Date(row.periodEnd!.getTime() + 15 * DAY);
      await patch(user.companyUuid, { quota: 500, periodEnd: newEnd.toISOString() }).expect(200);
      row = await companyRow(user.companyUuid);
      expect(row.quota).toBe(500);
      expect(row.used).toBe(90);
      expect(row.quotaWarnedAt80).toBeNull(); // 90 of 500 is under 80 % again
      expect(row.periodEnd!.toISOString()).toBe(newEnd.toISOString());

      const audit = await auditOf(user.companyUuid);
      expect(audit.map((a) => a.action)).toEqual(['package.assigned', 'quota.overridden', 'period.extended']);
      expect(audit.every((a) => a.adminUuid !== null)).toBe(true);
      expect(audit[0]).toMatchObject({ adminUuid: superAdmin.uuid });
      expect(audit[0].detail).toMatchObject({
        packageUuid: starter.uuid,
        packageName: 'Admin Starter',
        withoutPayment: true,
        period: 'started',
        previousPackageUuid: null,
      });
      expect(audit[1].detail).toEqual({ from: 100, to: 500, used: 90 });
      expect(audit[2].detail).toMatchObject({ to: newEnd.toISOString() });

      // Assigning the running package again extends the period as a payment would.
      await patch(user.companyUuid, { packageUuid: starter.uuid }).expect(200);
      expect((await companyRow(user.companyUuid)).periodEnd!.getTime()).toBe(newEnd.getTime() + 30 * DAY);
    });

    it.each([
      ['an unknown status', { status: 'deleted' }],
      ['a null status', { status: null }],
      ['an empty reason', { status: 'suspended', suspendedReason: '' }],
      ['a long reason', { status: 'suspended', suspendedReason: 'x'.repeat(501) }],
      ['a negative quota', { quota: -1 }],
      ['a fractional quota', { quota: 1.5 }],
      ['a quota as text', { quota: '100' }],
      ['a huge quota', { quota: 2 ** 31 }],
      ['a periodEnd that is not a date', { periodEnd: 'next month' }],
      ['a malformed packageUuid', { packageUuid: 'starter' }],
      ['an unknown field', { used: 0 }],
      ['a customer field', { name: 'Renamed' }],
    ])('refuses %s with 400 and writes nothing', async (_name, body) => {
      const before = await companyRow(owner.companyUuid);
      const counts = await tables();
      const res = await patch(owner.companyUuid, body).expect(400);
      expectFailure(res.body, 400, 'Validation failed');
      expect(await companyRow(owner.companyUuid)).toEqual(before);
      expect(await tables()).toEqual(counts);
    });

    it('refuses rule violations (400/404/409) and rolls back the whole PATCH', async () => {
      const user = await createActiveUser(t);
      const check = async (body: object, status: number, msg: string) => {
        const before = await companyRow(user.companyUuid);
        const counts = await tables();
        const res = await patch(user.companyUuid, body).expect(status);
        expectFailure(res.body, status, msg);
        expect(await companyRow(user.companyUuid)).toEqual(before);
        expect(await tables()).toEqual(counts);
      };
      const future = new Date(Date.now() + 90 * DAY).toISOString();
      await check(
        { periodEnd: future },
        409,
        'The company has no package: assign one before extending its period',
      );
      await check({ suspendedReason: 'why' }, 400, 'suspendedReason applies only to a suspended company');
      await check({ packageUuid: '00000000-0000-4000-8000-000000000000' }, 404, 'Package not found');
      await check({ packageUuid: archived.uuid }, 400, 'Package is archived and cannot be assigned');
      // A valid status change in the same request is rolled back with the failing part.
      await check(
        { status: 'suspended', packageUuid: archived.uuid },
        400,
        'Package is archived and cannot be assigned',
      );

      await patch(user.companyUuid, { packageUuid: starter.uuid }).expect(200);
      const { periodEnd } = await companyRow(user.companyUuid);
      await check(
        { periodEnd: new Date(Date.now() - DAY).toISOString() },
        400,
        'periodEnd must be in the future',
      );
      await check(
        { periodEnd: new Date(periodEnd!.getTime() - DAY).toISOString() },
        400,
        'periodEnd must be later than the current end of the period',
      );
      await check(
        { quota: 5, periodEnd: new Date(periodEnd!.getTime() - DAY).toISOString() },
        400,
        'periodEnd must be later than the current end of the period',
      );
    });

    it('e-mails no one about a suspension rolled back with the rest of the PATCH', async () => {
      const user = await createActiveUser(t);
      const before = await companyRow(user.companyUuid);
      const res = await patch(user.companyUuid, {
        status: 'suspended',
        suspendedReason: 'Rolled back',
        packageUuid: archived.uuid,
      }).expect(400);
      expectFailure(res.body, 400, 'Package is archived and cannot be assigned');
      expect(await companyRow(user.companyUuid)).toEqual(before);

      // Nothing is on its way for the rolled-back suspension; then the one that commits e-mails once.
      await t.settle();
      expect(t.smtp.count(user.email, /suspended/i)).toBe(0);
      await patch(user.companyUuid, { status: 'suspended', suspendedReason: 'Committed' }).expect(200);
      await t.settle();
      const mails = t.smtp.mails.filter(
        (m) => m.to === user.email.toLowerCase() && /suspended/i.test(m.subject),
      );
      expect(mails).toHaveLength(1);
      expect(mails[0].text).toContain('Committed');
      expect(mails[0].text).not.toContain('Rolled back');
    });

    it('answers 404 for an unknown company, 400 for a malformed uuid', async () => {
      const counts = await tables();
      const missing = await patch('00000000-0000-4000-8000-000000000000', { quota: 1 }).expect(404);
      expectFailure(missing.body, 404, 'Company not found');
      await patch('nope', { quota: 1 }).expect(400);
      expect(await tables()).toEqual(counts);
    });
  });

  describe('script token and relay password', () => {
    it('POST script-token stores a SHA-256 and a ciphertext of a new 32-byte token and returns its public URL', async () => {
      const user = await createActiveUser(t);
      const res = await t
        .http()
        .post(`${BASE}/${user.companyUuid}/script-token`)
        .set(...as(admin))
        .expect(200);
      const url: string = res.body.data.scriptUrl;
      const match = new RegExp(`^${PUBLIC_URL}/public/company/script/([A-Za-z0-9_-]{43})$`).exec(url);
      expect(match).not.toBeNull();
      const token = match![1];
      expect(Buffer.from(token, 'base64url')).toHaveLength(32);
      const row = await companyRow(user.companyUuid);
      expect(row.scriptTokenHash).toBe(createHash('sha256').update(token).digest('hex'));
      expect(row.scriptTokenCipher).not.toContain(token);
      expect(t.app.get(EncryptionService).decrypt(row.scriptTokenCipher!)).toBe(token);

      const second = await t
        .http()
        .post(`${BASE}/${user.companyUuid}/script-token`)
        .set(...as(superAdmin))
        .expect(200);
      expect(second.body.data.scriptUrl).not.toBe(url);
      expect((await companyRow(user.companyUuid)).scriptTokenHash).not.toBe(row.scriptTokenHash);
      expect((await auditOf(user.companyUuid)).map((a) => [a.action, a.adminUuid])).toEqual([
        ['script_token.rotated', admin.uuid],
        ['script_token.rotated', superAdmin.uuid],
      ]);
    });

    it('POST relay-password returns new credentials once and ends the old password', async () => {
      const user = await createActiveUser(t);
      const first = await t
        .http()
        .post(`${BASE}/${user.companyUuid}/relay-password`)
        .set(...as(admin))
        .expect(200);
      const hash1 = (await companyRow(user.companyUuid)).relayPasswordHash!;
      expect(first.body.data.relayUsername).toBe((await companyRow(user.companyUuid)).relayUsername);
      expect(hash1).toBe(relayPasswordDigest(first.body.data.relayPassword));
      const second = await t
        .http()
        .post(`${BASE}/${user.companyUuid}/relay-password`)
        .set(...as(superAdmin))
        .expect(200);
      const hash2 = (await companyRow(user.companyUuid)).relayPasswordHash!;
      expect(hash2).not.toBe(hash1);
      expect(hash2).toBe(relayPasswordDigest(second.body.data.relayPassword));
      expect((await auditOf(user.companyUuid)).map((a) => a.action)).toEqual([
        'relay_password.reset',
        'relay_password.reset',
      ]);
    });

    it.each(['script-token', 'relay-password'])(
      'POST %s: 404 unknown company, 400 malformed uuid',
      async (action) => {
        const counts = await tables();
        await t
          .http()
          .post(`${BASE}/00000000-0000-4000-8000-000000000000/${action}`)
          .set(...as(admin))
          .expect(404);
        await t
          .http()
          .post(`${BASE}/bad/${action}`)
          .set(...as(admin))
          .expect(400);
        expect(await tables()).toEqual(counts);
      },
    );
  });

  describe('role matrix rows "companies read" and "companies write"', () => {
    const writes: Array<[string, 'patch' | 'post', string, object]> = [
      ['PATCH /:uuid', 'patch', '', { status: 'suspended', suspendedReason: 'matrix' }],
      ['POST /:uuid/script-token', 'post', '/script-token', {}],
      ['POST /:uuid/relay-password', 'post', '/relay-password', {}],
    ];

    it.each(writes)(
      '%s: accounting 403 and nothing written; admin and superAdmin allowed',
      async (_n, method, path, body) => {
        const user = await createActiveUser(t);
        const before = await companyRow(user.companyUuid);
        const counts = await tables();
        const refused = await t
          .http()
          [method](`${BASE}/${user.companyUuid}${path}`)
          .set(...as(accounting))
          .send(body)
          .expect(403);
        expectFailure(refused.body, 403, 'Your role does not allow this');
        expect(await companyRow(user.companyUuid)).toEqual(before);
        expect(await tables()).toEqual(counts);

        const asUser = await t
          .http()
          [method](`${BASE}/${user.companyUuid}${path}`)
          .set(...bearer(user.accessToken))
          .send(body)
          .expect(403);
        expectFailure(asUser.body, 403, 'This route is for admins only');
        expect(await companyRow(user.companyUuid)).toEqual(before);

        for (const caller of [admin, superAdmin]) {
          await t
            .http()
            [method](`${BASE}/${user.companyUuid}${path}`)
            .set(...as(caller))
            .send(body)
            .expect(200);
        }
        expect((await auditOf(user.companyUuid)).length).toBeGreaterThanOrEqual(1);
      },
    );

    it('reads are open to all three roles, closed to users and to requests without a token', async () => {
      for (const caller of [superAdmin, admin, accounting]) {
        await t
          .http()
          .get(BASE)
          .set(...as(caller))
          .expect(200);
        await t
          .http()
          .get(`${BASE}/${owner.companyUuid}`)
          .set(...as(caller))
          .expect(200);
      }
      const asUser = await t
        .http()
        .get(BASE)
        .set(...bearer(owner.accessToken))
        .expect(403);
      expectFailure(asUser.body, 403, 'This route is for admins only');
      await t.http().get(`${BASE}/${owner.companyUuid}`).expect(401);
    });
  });
});
