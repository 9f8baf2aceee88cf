import { Company } from '../src/modules/companies/entities/company.entity';
import { Contact } from '../src/modules/users/entities/contact.entity';
import { User } from '../src/modules/users/entities/user.entity';
import {
  bearer,
  countAll,
  createActiveUser,
  createAdmin,
  CreatedAdmin,
  expectFailure,
  LoggedIn,
  loginUser,
  RegisteredUser,
  registerUser,
  uniqueEmail,
} from './support/factories';
import { tokenFromLink } from './support/smtp-sink';
import { createTestApp, TestApp } from './support/test-app';

const BASE = '/api/v1/admins/users';

describe('Admin user routes (/api/v1/admins/users)', () => {
  let t: TestApp;
  let superAdmin: CreatedAdmin;
  let admin: CreatedAdmin;
  let accounting: CreatedAdmin;
  let active: RegisteredUser & LoggedIn;
  let pending: RegisteredUser;

  beforeAll(async () => {
    t = await createTestApp();
    superAdmin = await createAdmin(t, 'superAdmin');
    admin = await createAdmin(t, 'admin');
    accounting = await createAdmin(t, 'accounting');
    active = await createActiveUser(t);
    pending = await registerUser(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const as = (a: { accessToken: string }) => bearer(a.accessToken);
  const userRow = (uuid: string) => t.dataSource.getRepository(User).findOneByOrFail({ uuid });
  const tables = () => countAll(t, ['users', 'contacts', 'companies', 'notifications']);

  describe('list', () => {
    const list = (query: Record<string, string | number>, caller: CreatedAdmin = accounting) =>
      t
        .http()
        .get(BASE)
        .query(query)
        .set(...as(caller));

    it('lists users with contact and company for every admin role, filtered and paged', async () => {
      for (const caller of [superAdmin, admin, accounting]) {
        const res = await list({ companyUuid: active.companyUuid }, caller).expect(200);
        expect(res.body.data.meta).toEqual({ page: 1, limit: 20, totalItems: 1, totalPages: 1 });
        expect(res.body.data.items).toEqual([
          {
            uuid: active.userUuid,
            email: active.email,
            status: 'active',
            role: 'owner',
            emailVerifiedAt: expect.any(String),
            lastLoginAt: expect.any(String),
            companyUuid: active.companyUuid,
            contactUuid: expect.any(String),
            createdAt: expect.any(String),
            contact: { uuid: expect.any(String), fullName: 'Ada Owner', phone: null, position: null },
            company: {
              uuid: active.companyUuid,
              name: 'Acme Mail',
              status: 'active',
              relayStatus: 'no_package',
            },
          },
        ]);
        expect(JSON.stringify(res.body)).not.toMatch(/password/i);
      }

      const pendingOnes = await list({ status: 'pending', limit: 100 }).expect(200);
      const emails = pendingOnes.body.data.items.map((u: { email: string }) => u.email);
      expect(emails).toContain(pending.email);
      expect(emails).not.toContain(active.email);
      expect(pendingOnes.body.data.items.every((u: { status: string }) => u.status === 'pending')).toBe(true);

      const byEmail = await list({ search: active.email.slice(0, 12).toUpperCase() }).expect(200);
      expect(byEmail.body.data.items.map((u: { uuid: string }) => u.uuid)).toEqual([active.userUuid]);

      const named = await createActiveUser(t);
      await t.dataSource
        .getRepository(Contact)
        .update(
          { companyId: (await userRow(named.userUuid)).companyId },
          { fullName: 'Zelda Quintessential' },
        );
      const byName = await list({ search: 'quintessential' }).expect(200);
      expect(byName.body.data.items.map((u: { uuid: string }) => u.uuid)).toEqual([named.userUuid]);

      const paged = await list({ limit: 1, page: 2, sort: 'email:asc' }).expect(200);
      expect(paged.body.data.items).toHaveLength(1);
      expect(paged.body.data.meta.totalItems).toBeGreaterThanOrEqual(3);
      const none = await list({ companyUuid: '00000000-0000-4000-8000-000000000000' }).expect(200);
      expect(none.body.data).toEqual({
        items: [],
        meta: { page: 1, limit: 20, totalItems: 0, totalPages: 0 },
      });
    });

    it.each<Record<string, string | number>>([
      { status: 'deleted' },
      { companyUuid: 'acme' },
      { sort: 'passwordHash:asc' },
      { page: -1 },
      { limit: 0 },
      { search: 'x'.repeat(101) },
      { role: 'owner' },
    ])('refuses %p with 400', async (query) => {
      const res = await list(query).expect(400);
      expectFailure(res.body, 400);
    });
  });

  describe('detail', () => {
    it('shows one user with its company', async () => {
      const res = await t
        .http()
        .get(`${BASE}/${active.userUuid}`)
        .set(...as(accounting))
        .expect(200);
      expect(res.body.data).toMatchObject({
        uuid: active.userUuid,
        email: active.email,
        company: { uuid: active.companyUuid, name: 'Acme Mail' },
        contact: { fullName: 'Ada Owner' },
      });
    });

    it('answers 404 for an unknown user and 400 for a malformed uuid', async () => {
      const missing = await t
        .http()
        .get(`${BASE}/00000000-0000-4000-8000-000000000000`)
        .set(...as(admin))
        .expect(404);
      expectFailure(missing.body, 404, 'User not found');
      await t
        .http()
        .get(`${BASE}/123`)
        .set(...as(admin))
        .expect(400);
    });
  });

  describe('PATCH status', () => {
    it('suspends a user (login 403, access token 401) and reactivates it', async () => {
      const user = await createActiveUser(t);
      const res = await t
        .http()
        .patch(`${BASE}/${user.userUuid}`)
        .set(...as(admin))
        .send({ status: 'suspended' })
        .expect(200);
      expect(res.body.data).toMatchObject({ uuid: user.userUuid, status: 'suspended' });
      expect((await userRow(user.userUuid)).status).toBe('suspended');

      const me = await t
        .http()
        .get('/api/v1/users/me')
        .set(...bearer(user.accessToken))
        .expect(401);
      expectFailure(me.body, 401);
      const login = await t
        .http()
        .post('/api/v1/users/login')
        .send({ email: user.email, password: user.password });
      expect(login.status).toBe(403);
      expectFailure(login.body, 403, 'User account is suspended');
      await t.http().post('/api/v1/refresh').send({ refreshToken: user.refreshToken }).expect(401);

      await t
        .http()
        .patch(`${BASE}/${user.userUuid}`)
        .set(...as(superAdmin))
        .send({ status: 'active' })
        .expect(200);
      expect((await userRow(user.userUuid)).status).toBe('active');
      await loginUser(t, user.email, user.password);

      // The company is untouched by a user's suspension.
      expect(
        (await t.dataSource.getRepository(Company).findOneByOrFail({ uuid: user.companyUuid })).status,
      ).toBe('active');
    });

    it('refuses to activate a user whose e-mail was never verified (409), writing nothing', async () => {
      const before = await userRow(pending.userUuid);
      const res = await t
        .http()
        .patch(`${BASE}/${pending.userUuid}`)
        .set(...as(admin))
        .send({ status: 'active' })
        .expect(409);
      expectFailure(res.body, 409, 'The user has not verified the e-mail address yet');
      expect(await userRow(pending.userUuid)).toEqual(before);
    });

    it.each([
      [{ status: 'pending' }],
      [{ status: 'deleted' }],
      [{ status: null }],
      [{ email: 'x@y.z' }],
      [{ role: 'owner' }],
    ])('refuses %p with 400 and writes nothing', async (body) => {
      const before = await userRow(active.userUuid);
      const res = await t
        .http()
        .patch(`${BASE}/${active.userUuid}`)
        .set(...as(admin))
        .send(body)
        .expect(400);
      expectFailure(res.body, 400, 'Validation failed');
      expect(await userRow(active.userUuid)).toEqual(before);
    });

    it('answers 404 for an unknown user', async () => {
      await t
        .http()
        .patch(`${BASE}/00000000-0000-4000-8000-000000000000`)
        .set(...as(admin))
        .send({ status: 'suspended' })
        .expect(404);
    });
  });

  describe('POST resend-verification', () => {
    it('re-sends the verification e-mail of an unverified user; the link verifies it', async () => {
      const user = await registerUser(t);
      await t.smtp.waitFor(user.email, /verify/i);
      const res = await t
        .http()
        .post(`${BASE}/${user.userUuid}/resend-verification`)
        .set(...as(admin))
        .send({})
        .expect(200);
      expect(res.body).toMatchObject({ status: 'success', code: 200, data: {} });
      const mail = await t.smtp.waitFor(user.email, /verify/i, 2);
      await t
        .http()
        .post('/api/v1/users/verify-email')
        .send({ token: tokenFromLink(mail, '/verify-email') })
        .expect(200);
      expect((await userRow(user.userUuid)).status).toBe('active');
    });

    it('re-sends the invitation to an invited member who has no password yet', async () => {
      const email = uniqueEmail('invited');
      const created = await t
        .http()
        .post(`/api/v1/companies/${active.companyUuid}/users`)
        .set(...bearer(active.accessToken))
        .send({ email, fullName: 'Nia Invited' })
        .expect(201);
      await t.smtp.waitFor(email, /invited/i);
      await t
        .http()
        .post(`${BASE}/${created.body.data.uuid}/resend-verification`)
        .set(...as(superAdmin))
        .expect(200);
      const mail = await t.smtp.waitFor(email, /invited/i, 2);
      expect(t.smtp.count(email, /verify/i)).toBe(0);
      await t
        .http()
        .post('/api/v1/users/accept-invite')
        .send({ token: tokenFromLink(mail, '/accept-invite'), password: 'invited password 1' })
        .expect(200);
    });

    it('answers 409 for a verified user, 404 unknown, 400 malformed or with a body field, sending nothing', async () => {
      const mails = t.smtp.mails.length;
      const counts = await tables();
      const verified = await t
        .http()
        .post(`${BASE}/${active.userUuid}/resend-verification`)
        .set(...as(admin))
        .expect(409);
      expectFailure(verified.body, 409, 'The e-mail address is already verified');
      await t
        .http()
        .post(`${BASE}/00000000-0000-4000-8000-000000000000/resend-verification`)
        .set(...as(admin))
        .expect(404);
      await t
        .http()
        .post(`${BASE}/x/resend-verification`)
        .set(...as(admin))
        .expect(400);
      await t.settle();
      expect(t.smtp.mails.length).toBe(mails);
      expect(await tables()).toEqual(counts);
    });
  });

  describe('role matrix row "users": superAdmin and admin yes, accounting read only', () => {
    it('accounting reads (200) but may not write (403), and nothing is written or sent', async () => {
      const before = await userRow(pending.userUuid);
      const mails = t.smtp.mails.length;
      const patch = await t
        .http()
        .patch(`${BASE}/${pending.userUuid}`)
        .set(...as(accounting))
        .send({ status: 'suspended' })
        .expect(403);
      expectFailure(patch.body, 403, 'Your role does not allow this');
      const resend = await t
        .http()
        .post(`${BASE}/${pending.userUuid}/resend-verification`)
        .set(...as(accounting))
        .expect(403);
      expectFailure(resend.body, 403, 'Your role does not allow this');
      expect(await userRow(pending.userUuid)).toEqual(before);
      await t.settle();
      expect(t.smtp.mails.length).toBe(mails);
    });

    it('admin and superAdmin write; users and anonymous callers are refused', async () => {
      for (const caller of [admin, superAdmin]) {
        await t
          .http()
          .patch(`${BASE}/${pending.userUuid}`)
          .set(...as(caller))
          .send({ status: 'suspended' })
          .expect(200);
        await t
          .http()
          .post(`${BASE}/${pending.userUuid}/resend-verification`)
          .set(...as(caller))
          .expect(200);
      }
      expect((await userRow(pending.userUuid)).status).toBe('suspended');
      const asUser = await t
        .http()
        .get(BASE)
        .set(...bearer(active.accessToken))
        .expect(403);
      expectFailure(asUser.body, 403, 'This route is for admins only');
      await t.http().get(`${BASE}/${active.userUuid}`).expect(401);
    });
  });
});
