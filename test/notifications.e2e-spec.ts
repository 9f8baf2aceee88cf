import { randomUUID } from 'node:crypto';
import { Admin } from '../src/modules/admins/entities/admin.entity';
import { Company } from '../src/modules/companies/entities/company.entity';
import { Notification } from '../src/modules/notifications/entities/notification.entity';
import { Notifier } from '../src/modules/notifications/notifier';
import { User } from '../src/modules/users/entities/user.entity';
import {
  bearer,
  countRows,
  createActiveUser,
  createAdmin,
  CreatedAdmin,
  expectFailure,
  LoggedIn,
  RegisteredUser,
  registerUser,
} from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

/**
 * endpoints.md `/api/v1/users/notification` and `/api/v1/admins/notification` (with
 * broadcast); auth.md: own notifications for every admin role, broadcast for superAdmin and
 * admin; another recipient's notification is a 404.
 */

type Caller = RegisteredUser & LoggedIn;

const USER_BASE = '/api/v1/users/notification';
const ADMIN_BASE = '/api/v1/admins/notification';
const BROADCAST = `${ADMIN_BASE}/broadcast`;

describe('Notifications', () => {
  let t: TestApp;
  let service: Notifier;
  let alice: Caller;
  let bob: Caller;
  let superAdmin: CreatedAdmin;
  let admin: CreatedAdmin;
  let accounting: CreatedAdmin;

  const userRow = (u: RegisteredUser) =>
    t.dataSource.getRepository(User).findOneByOrFail({ uuid: u.userUuid });
  const adminRow = (a: CreatedAdmin) => t.dataSource.getRepository(Admin).findOneByOrFail({ uuid: a.uuid });
  const notificationsOf = async (u: RegisteredUser) =>
    t.dataSource
      .getRepository(Notification)
      .find({ where: { userId: (await userRow(u)).id }, order: { id: 'ASC' } });

  /** One notification per call, so each gets its own id (the order the lists sort on within a second). */
  async function notifyUser(u: RegisteredUser, type: Notification['type'], title: string): Promise<void> {
    await service.notifyUsers([(await userRow(u)).id], { type, title, body: `${title} body` });
  }

  const get = (path: string, token: string) =>
    t
      .http()
      .get(path)
      .set(...bearer(token));
  const patch = (path: string, token: string) =>
    t
      .http()
      .patch(path)
      .set(...bearer(token));
  const del = (path: string, token: string) =>
    t
      .http()
      .delete(path)
      .set(...bearer(token));
  const post = (path: string, token: string | undefined, body: object) => {
    const req = t.http().post(path);
    return (token ? req.set(...bearer(token)) : req).send(body);
  };

  beforeAll(async () => {
    t = await createTestApp();
    service = t.app.get(Notifier);
    alice = await createActiveUser(t);
    bob = await createActiveUser(t);
    superAdmin = await createAdmin(t, 'superAdmin');
    admin = await createAdmin(t, 'admin');
    accounting = await createAdmin(t, 'accounting');
  });
  afterAll(async () => {
    await t.close();
  });

  describe('user routes', () => {
    beforeAll(async () => {
      await notifyUser(alice, 'billing.paid', 'first');
      await notifyUser(alice, 'quota.80', 'second');
      await notifyUser(alice, 'billing.paid', 'third');
      await notifyUser(bob, 'billing.paid', 'bob only');
    });

    it('lists the own notifications newest first, with paging', async () => {
      const res = await get(USER_BASE, alice.accessToken).expect(200);
      expect(res.body).toMatchObject({ status: 'success', code: 200 });
      expect(res.body.data.meta).toEqual({ page: 1, limit: 20, totalItems: 3, totalPages: 1 });
      expect(res.body.data.items.map((n: { title: string }) => n.title)).toEqual([
        'third',
        'second',
        'first',
      ]);
      expect(res.body.data.items[0]).toEqual({
        uuid: expect.any(String),
        type: 'billing.paid',
        title: 'third',
        body: 'third body',
        data: null,
        userUuid: alice.userUuid,
        adminUuid: null,
        readAt: null,
        createdAt: expect.any(String),
      });

      const page2 = await get(`${USER_BASE}?limit=2&page=2`, alice.accessToken).expect(200);
      expect(page2.body.data.meta).toEqual({ page: 2, limit: 2, totalItems: 3, totalPages: 2 });
      expect(page2.body.data.items.map((n: { title: string }) => n.title)).toEqual(['first']);

      const oldest = await get(`${USER_BASE}?sort=createdAt:asc`, alice.accessToken).expect(200);
      expect(oldest.body.data.items.map((n: { title: string }) => n.title)).toEqual([
        'first',
        'second',
        'third',
      ]);
    });

    it('filters by type and by unread', async () => {
      const byType = await get(`${USER_BASE}?type=quota.80`, alice.accessToken).expect(200);
      expect(byType.body.data.items.map((n: { title: string }) => n.title)).toEqual(['second']);

      const first = (await notificationsOf(alice))[0];
      await patch(`${USER_BASE}/${first.uuid}/read`, alice.accessToken).expect(200);
      const unread = await get(`${USER_BASE}?unread=true`, alice.accessToken).expect(200);
      expect(unread.body.data.items.map((n: { title: string }) => n.title)).toEqual(['third', 'second']);
      const read = await get(`${USER_BASE}?unread=false`, alice.accessToken).expect(200);
      expect(read.body.data.items.map((n: { title: string }) => n.title)).toEqual(['first']);
    });

    it.each([
      ['type=billing.unknown', /type/],
      ['unread=yes', /unread/],
      ['limit=0', /limit/],
      ['limit=101', /limit/],
      ['page=0', /page/],
      ['sort=title:asc', /sort/],
      ['colour=red', /colour/],
    ])('refuses a bad query (%s) with 400', async (query, msg) => {
      const res = await get(`${USER_BASE}?${query}`, alice.accessToken).expect(400);
      expectFailure(res.body, 400);
      expect(JSON.stringify(res.body.error)).toMatch(msg);
    });

    it('counts unread, marks one read (once) and all read', async () => {
      const count = await get(`${USER_BASE}/unread-count`, alice.accessToken).expect(200);
      expect(count.body.data).toEqual({ count: 2 });

      const second = (await notificationsOf(alice))[1];
      const read = await patch(`${USER_BASE}/${second.uuid}/read`, alice.accessToken).expect(200);
      expect(read.body.data).toMatchObject({
        uuid: second.uuid,
        title: 'second',
        readAt: expect.any(String),
      });
      const again = await patch(`${USER_BASE}/${second.uuid}/read`, alice.accessToken).expect(200);
      expect(again.body.data.readAt).toBe(read.body.data.readAt);

      expect((await get(`${USER_BASE}/unread-count`, alice.accessToken).expect(200)).body.data).toEqual({
        count: 1,
      });
      const all = await patch(`${USER_BASE}/read-all`, alice.accessToken).expect(200);
      expect(all.body.data).toEqual({ updated: 1 });
      expect((await patch(`${USER_BASE}/read-all`, alice.accessToken).expect(200)).body.data).toEqual({
        updated: 0,
      });
      expect((await get(`${USER_BASE}/unread-count`, alice.accessToken).expect(200)).body.data).toEqual({
        count: 0,
      });
      // Bob's are untouched.
      expect((await get(`${USER_BASE}/unread-count`, bob.accessToken).expect(200)).body.data).toEqual({
        count: 1,
      });
    });

    it("answers 404 for another user's notification, and leaves it alone", async () => {
      const bobs = (await notificationsOf(bob))[0];
      expectFailure(
        (await patch(`${USER_BASE}/${bobs.uuid}/read`, alice.accessToken).expect(404)).body,
        404,
        'Notification not found',
      );
      expectFailure((await del(`${USER_BASE}/${bobs.uuid}`, alice.accessToken).expect(404)).body, 404);
      expectFailure(
        (await patch(`${USER_BASE}/${randomUUID()}/read`, alice.accessToken).expect(404)).body,
        404,
      );
      const after = await t.dataSource.getRepository(Notification).findOneByOrFail({ id: bobs.id });
      expect(after.readAt).toBeNull();
    });

    it('refuses a malformed uuid with 400', async () => {
      expectFailure((await patch(`${USER_BASE}/not-a-uuid/read`, alice.accessToken).expect(400)).body, 400);
      expectFailure((await del(`${USER_BASE}/not-a-uuid`, alice.accessToken).expect(400)).body, 400);
    });

    it('deletes the own notification', async () => {
      const bobs = (await notificationsOf(bob))[0];
      const res = await del(`${USER_BASE}/${bobs.uuid}`, bob.accessToken).expect(200);
      expect(res.body.data).toEqual({});
      expect(await notificationsOf(bob)).toHaveLength(0);
      await del(`${USER_BASE}/${bobs.uuid}`, bob.accessToken).expect(404);
    });

    it('refuses admins (403) and requests without a token (401)', async () => {
      expectFailure((await get(USER_BASE, superAdmin.accessToken).expect(403)).body, 403);
      expectFailure((await t.http().get(USER_BASE).expect(401)).body, 401);
      expectFailure((await t.http().patch(`${USER_BASE}/read-all`).expect(401)).body, 401);
    });
  });

  describe('admin routes (own notifications)', () => {
    beforeAll(async () => {
      await service.notifyAdmins(['superAdmin', 'admin', 'accounting'], {
        type: 'company.registered',
        title: 'A company registered',
        body: 'Acme registered',
      });
      await service.notifyAdmins(['accounting'], {
        type: 'billing.proof_uploaded',
        title: 'A proof was uploaded',
        body: 'Check it',
      });
    });

    const ownOf = async (a: CreatedAdmin) =>
      t.dataSource
        .getRepository(Notification)
        .find({ where: { adminId: (await adminRow(a)).id }, order: { id: 'ASC' } });

    it.each(['superAdmin', 'admin', 'accounting'] as const)('%s lists and counts its own', async (role) => {
      const caller = { superAdmin, admin, accounting }[role];
      const expected = role === 'accounting' ? 2 : 1;
      const res = await get(ADMIN_BASE, caller.accessToken).expect(200);
      expect(res.body.data.meta.totalItems).toBe(expected);
      expect(res.body.data.items[0]).toMatchObject({ adminUuid: caller.uuid, userUuid: null });
      expect((await get(`${ADMIN_BASE}/unread-count`, caller.accessToken).expect(200)).body.data).toEqual({
        count: expected,
      });
    });

    it('filters by type, marks read, reads all, deletes', async () => {
      const byType = await get(`${ADMIN_BASE}?type=billing.proof_uploaded`, accounting.accessToken).expect(
        200,
      );
      expect(byType.body.data.items.map((n: { title: string }) => n.title)).toEqual(['A proof was uploaded']);

      const [registered, proof] = await ownOf(accounting);
      const read = await patch(`${ADMIN_BASE}/${registered.uuid}/read`, accounting.accessToken).expect(200);
      expect(read.body.data).toMatchObject({ uuid: registered.uuid, readAt: expect.any(String) });
      const unread = await get(`${ADMIN_BASE}?unread=true`, accounting.accessToken).expect(200);
      expect(unread.body.data.items.map((n: { uuid: string }) => n.uuid)).toEqual([proof.uuid]);
      expect((await patch(`${ADMIN_BASE}/read-all`, accounting.accessToken).expect(200)).body.data).toEqual({
        updated: 1,
      });
      expect(
        (await del(`${ADMIN_BASE}/${proof.uuid}`, accounting.accessToken).expect(200)).body.data,
      ).toEqual({});
      expect(await ownOf(accounting)).toHaveLength(1);
    });

    it("answers 404 for another admin's or a user's notification", async () => {
      const [others] = await ownOf(admin);
      await patch(`${ADMIN_BASE}/${others.uuid}/read`, superAdmin.accessToken).expect(404);
      await del(`${ADMIN_BASE}/${others.uuid}`, superAdmin.accessToken).expect(404);
      const [usersOwn] = await notificationsOf(alice);
      await patch(`${ADMIN_BASE}/${usersOwn.uuid}/read`, superAdmin.accessToken).expect(404);
      await del(`${ADMIN_BASE}/${usersOwn.uuid}`, superAdmin.accessToken).expect(404);
      expect((await ownOf(admin))[0].readAt).toBeNull();
      expect(await notificationsOf(alice)).toContainEqual(expect.objectContaining({ uuid: usersOwn.uuid }));
    });

    it('refuses a malformed uuid with 400', async () => {
      for (const res of [
        await patch(`${ADMIN_BASE}/not-a-uuid/read`, superAdmin.accessToken).expect(400),
        await del(`${ADMIN_BASE}/123`, superAdmin.accessToken).expect(400),
      ]) {
        expectFailure(res.body, 400, /uuid is expected/);
      }
    });

    it('refuses users (403) and requests without a token (401)', async () => {
      expectFailure((await get(ADMIN_BASE, alice.accessToken).expect(403)).body, 403);
      expectFailure((await t.http().get(`${ADMIN_BASE}/unread-count`).expect(401)).body, 401);
    });
  });

  describe('broadcast', () => {
    let carol: Caller;
    let suspendedCo: Caller;
    let pendingUser: RegisteredUser;

    beforeAll(async () => {
      carol = await createActiveUser(t);
      suspendedCo = await createActiveUser(t);
      await t.dataSource
        .getRepository(Company)
        .update({ uuid: suspendedCo.companyUuid }, { status: 'suspended' });
      pendingUser = await registerUser(t); // never verified: not an active user
    });

    const broadcastsOf = async (u: RegisteredUser) =>
      (await notificationsOf(u)).filter((n) => n.type === 'broadcast');

    async function activeUsersOfActiveCompanies(): Promise<number> {
      const rows: Array<{ n: string | number }> = await t.dataSource.query(
        "SELECT COUNT(*) AS n FROM users u JOIN companies c ON c.id = u.company_id WHERE u.status = 'active' AND c.status = 'active'",
      );
      return Number(rows[0].n);
    }

    it('to all: one row per active user of every active company (201 { recipients })', async () => {
      const expected = await activeUsersOfActiveCompanies();
      const before = await countRows(t, 'notifications');
      const res = await post(BROADCAST, superAdmin.accessToken, {
        title: 'Maintenance tonight',
        body: 'The relay restarts at 22:00 UTC.',
      }).expect(201);
      expect(res.body).toMatchObject({ status: 'success', code: 201, data: { recipients: expected } });
      expect(expected).toBeGreaterThanOrEqual(3);
      expect(await countRows(t, 'notifications')).toBe(before + expected);

      for (const u of [alice, bob, carol]) {
        const [row] = await broadcastsOf(u);
        expect(row).toMatchObject({ title: 'Maintenance tonight', body: 'The relay restarts at 22:00 UTC.' });
        expect(row.data).toEqual({ broadcastUuid: expect.any(String) });
      }
      expect(await broadcastsOf(suspendedCo)).toHaveLength(0);
      expect(await broadcastsOf(pendingUser)).toHaveLength(0);
      // No e-mail unless asked (none is still on its way either).
      await t.settle();
      expect(t.smtp.count(alice.email, /Maintenance tonight/)).toBe(0);

      const listed = await get(`${USER_BASE}?type=broadcast`, carol.accessToken).expect(200);
      expect(listed.body.data.items).toHaveLength(1);
    });

    it('to given companies, e-mailed when email is true (admin role)', async () => {
      const res = await post(BROADCAST, admin.accessToken, {
        title: 'Only for you',
        body: 'A note for two companies.',
        companyUuids: [bob.companyUuid, carol.companyUuid],
        email: true,
      }).expect(201);
      expect(res.body.data).toEqual({ recipients: 2 });
      for (const u of [bob, carol]) {
        expect((await broadcastsOf(u)).map((n) => n.title)).toContain('Only for you');
        const mail = await t.smtp.waitFor(u.email, /Only for you/);
        expect(mail.text).toContain('A note for two companies.');
      }
      expect((await broadcastsOf(alice)).map((n) => n.title)).not.toContain('Only for you');
      await t.settle();
      expect(t.smtp.count(alice.email, /Only for you/)).toBe(0);
    });

    it('reaches a named company even when it is suspended', async () => {
      const res = await post(BROADCAST, superAdmin.accessToken, {
        title: 'About your suspension',
        body: 'Contact support.',
        companyUuids: [suspendedCo.companyUuid],
      }).expect(201);
      expect(res.body.data).toEqual({ recipients: 1 });
      expect((await broadcastsOf(suspendedCo)).map((n) => n.title)).toEqual(['About your suspension']);
    });

    it('accounting, users and anonymous callers cannot broadcast; nothing is written', async () => {
      const before = await countRows(t, 'notifications');
      const body = { title: 'Nope', body: 'Nope' };
      expectFailure(
        (await post(BROADCAST, accounting.accessToken, body).expect(403)).body,
        403,
        'Your role does not allow this',
      );
      expectFailure((await post(BROADCAST, alice.accessToken, body).expect(403)).body, 403);
      expectFailure((await post(BROADCAST, undefined, body).expect(401)).body, 401);
      expect(await countRows(t, 'notifications')).toBe(before);
    });

    it('names unknown companies in a 400 and writes nothing', async () => {
      const before = await countRows(t, 'notifications');
      const unknown = [randomUUID(), randomUUID()];
      const res = await post(BROADCAST, superAdmin.accessToken, {
        title: 'Partial?',
        body: 'Never partial.',
        companyUuids: [alice.companyUuid, ...unknown],
      }).expect(400);
      expectFailure(res.body, 400);
      for (const uuid of unknown) expect(res.body.msg).toContain(uuid);
      expect(res.body.msg).not.toContain(alice.companyUuid);
      expect(await countRows(t, 'notifications')).toBe(before);
    });

    it.each([
      ['no title', { body: 'x' }],
      ['an empty title', { title: '   ', body: 'x' }],
      ['a title over 200 characters', { title: 'x'.repeat(201), body: 'x' }],
      ['a body over 5000 characters', { title: 'x', body: 'x'.repeat(5001) }],
      ['companyUuids that are not UUIDs', { title: 'x', body: 'x', companyUuids: ['acme'] }],
      ['an empty companyUuids', { title: 'x', body: 'x', companyUuids: [] }],
      ['companyUuids that is not an array', { title: 'x', body: 'x', companyUuids: 'all' }],
      ['a non-boolean email', { title: 'x', body: 'x', email: 'yes' }],
      ['an unknown field', { title: 'x', body: 'x', urgent: true }],
    ])('refuses %s with 400 and writes nothing', async (_case, body) => {
      const before = await countRows(t, 'notifications');
      const res = await post(BROADCAST, superAdmin.accessToken, body).expect(400);
      expectFailure(res.body, 400);
      expect(await countRows(t, 'notifications')).toBe(before);
    });

    it('accepts the longest title and body', async () => {
      const res = await post(BROADCAST, superAdmin.accessToken, {
        title: 't'.repeat(200),
        body: 'b'.repeat(5000),
        companyUuids: [alice.companyUuid],
      }).expect(201);
      expect(res.body.data).toEqual({ recipients: 1 });
    });
  });
});
