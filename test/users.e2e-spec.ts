import { User } from '../src/modules/users/entities/user.entity';
import { tokenFromLink } from './support/smtp-sink';
import { createTestApp, TestApp } from './support/test-app';
import { bearer, countAll, createActiveUser, expectFailure, PASSWORD } from './support/factories';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const NEW_PASSWORD = 'a completely new passphrase';

describe('User profile: GET/PATCH /api/v1/users/me, PUT /api/v1/users/me/password', () => {
  let t: TestApp;

  /** Runs SQL written with `?` placeholders on either database. */
  const sql = (text: string, params: unknown[] = []): Promise<Array<Record<string, unknown>>> => {
    let n = 0;
    const query = t.dataSource.options.type === 'postgres' ? text.replace(/\?/g, () => `$${++n}`) : text;
    return t.dataSource.query(query, params);
  };

  /** The user with its contact and company, as stored. */
  const storedUser = (uuid: string) =>
    t.dataSource
      .getRepository(User)
      .findOneOrFail({ where: { uuid }, relations: { contact: true, company: true } });

  const contactRow = async (userUuid: string) => {
    const [row] = await sql(
      'SELECT c.uuid, c.full_name, c.phone, c.position FROM contacts c JOIN users u ON u.contact_id = c.id WHERE u.uuid = ?',
      [userUuid],
    );
    return row;
  };

  const passwordRow = async (userUuid: string) => {
    const [row] = await sql('SELECT password_hash, password_version FROM users WHERE uuid = ?', [userUuid]);
    return { hash: row.password_hash as string, version: Number(row.password_version) };
  };

  const getMe = (token: string) =>
    t
      .http()
      .get('/api/v1/users/me')
      .set(...bearer(token));
  const patchMe = (token: string, body: object) =>
    t
      .http()
      .patch('/api/v1/users/me')
      .set(...bearer(token))
      .send(body);
  const changePassword = (token: string, body: object) =>
    t
      .http()
      .put('/api/v1/users/me/password')
      .set(...bearer(token))
      .send(body);
  const login = (email: string, password: string) =>
    t.http().post('/api/v1/users/login').send({ email, password });

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('GET /me', () => {
    it('returns exactly user, contact and company summary, matching the database, without any hash', async () => {
      const user = await createActiveUser(t);
      const stored = await storedUser(user.userUuid);

      const res = await getMe(user.accessToken).expect(200);
      expect(res.body).toEqual({
        status: 'success',
        code: 200,
        msg: 'Profile fetched',
        data: {
          user: {
            uuid: user.userUuid,
            email: user.email,
            status: 'active',
            role: 'owner',
            emailVerifiedAt: stored.emailVerifiedAt!.toISOString(),
            lastLoginAt: stored.lastLoginAt!.toISOString(),
            companyUuid: user.companyUuid,
            contactUuid: stored.contact.uuid,
            createdAt: stored.createdAt.toISOString(),
          },
          contact: { uuid: stored.contact.uuid, fullName: 'Ada Owner', phone: null, position: null },
          company: { uuid: user.companyUuid, name: 'Acme Mail', status: 'active', relayStatus: 'no_package' },
        },
      });
      for (const value of [
        res.body.data.user.emailVerifiedAt,
        res.body.data.user.lastLoginAt,
        res.body.data.user.createdAt,
      ]) {
        expect(value).toMatch(ISO_UTC);
      }
      expect(stored.company.uuid).toBe(user.companyUuid);

      const text = JSON.stringify(res.body);
      expect(text).not.toMatch(/password/i);
      expect(text).not.toContain('$argon2');
      expect(text).not.toMatch(/"id"\s*:/);
    });

    it('returns the same user, contact and company as the login response', async () => {
      const user = await createActiveUser(t);
      const loggedIn = await login(user.email, PASSWORD).expect(200);
      const res = await getMe(loggedIn.body.data.accessToken).expect(200);
      expect(res.body.data).toEqual({
        user: loggedIn.body.data.user,
        contact: loggedIn.body.data.contact,
        company: loggedIn.body.data.company,
      });
      expect(JSON.stringify(loggedIn.body)).not.toContain('$argon2');
    });
  });

  describe('PATCH /me', () => {
    it('updates fullName, phone and position (trimmed), answers the GET /me shape and stores the contact', async () => {
      const user = await createActiveUser(t);
      const before = (await getMe(user.accessToken).expect(200)).body.data;

      const res = await patchMe(user.accessToken, {
        fullName: '  Grace Hopper ',
        phone: '+62 811 000 111',
        position: 'Rear Admiral',
      }).expect(200);
      const expected = {
        user: before.user,
        contact: {
          uuid: before.contact.uuid,
          fullName: 'Grace Hopper',
          phone: '+62 811 000 111',
          position: 'Rear Admiral',
        },
        company: before.company,
      };
      expect(res.body).toEqual({ status: 'success', code: 200, msg: 'Profile updated', data: expected });

      expect(await contactRow(user.userUuid)).toEqual({
        uuid: before.contact.uuid,
        full_name: 'Grace Hopper',
        phone: '+62 811 000 111',
        position: 'Rear Admiral',
      });
      const after = await getMe(user.accessToken).expect(200);
      expect(after.body.data).toEqual(expected);
    });

    it('changes only the fields that are sent', async () => {
      const user = await createActiveUser(t);
      await patchMe(user.accessToken, { phone: '+62 811 222 333' }).expect(200);

      const res = await patchMe(user.accessToken, { position: 'Postmaster' }).expect(200);
      expect(res.body).toMatchObject({ status: 'success', code: 200 });
      expect(res.body.data.contact).toMatchObject({
        fullName: 'Ada Owner',
        phone: '+62 811 222 333',
        position: 'Postmaster',
      });
      expect(await contactRow(user.userUuid)).toMatchObject({
        full_name: 'Ada Owner',
        phone: '+62 811 222 333',
        position: 'Postmaster',
      });
    });

    it('refuses unknown fields with 400 and changes nothing', async () => {
      const user = await createActiveUser(t);
      const contactBefore = await contactRow(user.userUuid);
      const userBefore = await storedUser(user.userUuid);
      const counts = await countAll(t);

      for (const body of [
        { fullName: 'Mallory', email: 'mallory@example.com' },
        { fullName: 'Mallory', status: 'suspended' },
        { role: 'member' },
      ]) {
        const res = await patchMe(user.accessToken, body).expect(400);
        expectFailure(res.body, 400);
        const unknown = Object.keys(body).find((k) => k !== 'fullName');
        expect(res.body.error.details).toEqual(
          expect.arrayContaining([
            { field: unknown, messages: [expect.stringContaining('should not exist')] },
          ]),
        );
      }

      expect(await contactRow(user.userUuid)).toEqual(contactBefore);
      const userAfter = await storedUser(user.userUuid);
      expect({ email: userAfter.email, status: userAfter.status, role: userAfter.companyRole }).toEqual({
        email: userBefore.email,
        status: userBefore.status,
        role: userBefore.companyRole,
      });
      expect(await countAll(t)).toEqual(counts);
    });

    it('refuses invalid values with 400 and field details, and changes nothing', async () => {
      const user = await createActiveUser(t);
      const contactBefore = await contactRow(user.userUuid);

      const res = await patchMe(user.accessToken, { fullName: '   ', phone: 'call me maybe' }).expect(400);
      expectFailure(res.body, 400);
      const fields = (res.body.error.details as Array<{ field: string }>).map((d) => d.field).sort();
      expect(fields).toEqual(['fullName', 'phone']);
      expect(await contactRow(user.userUuid)).toEqual(contactBefore);
    });

    it('accepts an empty body: 200 with the profile unchanged', async () => {
      const user = await createActiveUser(t);
      const before = (await getMe(user.accessToken).expect(200)).body.data;
      const contactBefore = await contactRow(user.userUuid);

      const res = await patchMe(user.accessToken, {}).expect(200);
      expect(res.body).toEqual({ status: 'success', code: 200, msg: 'Profile updated', data: before });
      expect(await contactRow(user.userUuid)).toEqual(contactBefore);
    });
  });

  describe('PUT /me/password', () => {
    it('refuses a wrong current password with 400 and changes nothing', async () => {
      const user = await createActiveUser(t);
      const before = await passwordRow(user.userUuid);

      const res = await changePassword(user.accessToken, {
        currentPassword: 'not the password',
        newPassword: NEW_PASSWORD,
      }).expect(400);
      expectFailure(res.body, 400, 'Current password is incorrect');

      expect(await passwordRow(user.userUuid)).toEqual(before);
      await login(user.email, PASSWORD).expect(200);
      const refused = await login(user.email, NEW_PASSWORD).expect(401);
      expectFailure(refused.body, 401, 'Invalid email or password');
    });

    it('refuses a new password under 10 characters with 400 and details on newPassword', async () => {
      const user = await createActiveUser(t);
      const before = await passwordRow(user.userUuid);

      const res = await changePassword(user.accessToken, {
        currentPassword: PASSWORD,
        newPassword: 'short',
      }).expect(400);
      expectFailure(res.body, 400);
      expect(res.body.error.details).toEqual([
        {
          field: 'newPassword',
          messages: [expect.stringMatching(/newPassword must be longer than or equal to 10/)],
        },
      ]);

      const missing = await changePassword(user.accessToken, { newPassword: NEW_PASSWORD }).expect(400);
      expectFailure(missing.body, 400);
      expect(missing.body.error.details).toEqual([{ field: 'currentPassword', messages: expect.any(Array) }]);

      expect(await passwordRow(user.userUuid)).toEqual(before);
      await login(user.email, PASSWORD).expect(200);
    });

    it('changes the password: old one refused, new one accepted, version bumped, earlier reset link refused', async () => {
      const user = await createActiveUser(t);
      await t.http().post('/api/v1/users/forgot-password').send({ email: user.email }).expect(200);
      const resetToken = tokenFromLink(await t.smtp.waitFor(user.email, /reset/i), '/reset-password');
      const before = await passwordRow(user.userUuid);

      const res = await changePassword(user.accessToken, {
        currentPassword: PASSWORD,
        newPassword: NEW_PASSWORD,
      }).expect(200);
      expect(res.body).toEqual({ status: 'success', code: 200, msg: 'Password changed', data: {} });

      const after = await passwordRow(user.userUuid);
      expect(after.version).toBe(before.version + 1);
      expect(after.hash).not.toBe(before.hash);
      expect(after.hash).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
      expect(after.hash).not.toContain(NEW_PASSWORD);

      const old = await login(user.email, PASSWORD).expect(401);
      expectFailure(old.body, 401, 'Invalid email or password');
      const fresh = await login(user.email, NEW_PASSWORD).expect(200);
      expect(fresh.body).toMatchObject({
        status: 'success',
        code: 200,
        data: { user: { uuid: user.userUuid } },
      });

      // The reset link was issued for the previous password version.
      const reset = await t
        .http()
        .post('/api/v1/users/reset-password')
        .send({ token: resetToken, password: 'the attacker password' })
        .expect(401);
      expectFailure(reset.body, 401, 'Invalid or expired reset token');
      expect(await passwordRow(user.userUuid)).toEqual(after);
      await login(user.email, NEW_PASSWORD).expect(200);
    });
  });

  it('refuses every /me route without a token (401)', async () => {
    const requests = [
      t.http().get('/api/v1/users/me'),
      t.http().patch('/api/v1/users/me').send({ fullName: 'X' }),
      t
        .http()
        .put('/api/v1/users/me/password')
        .send({ currentPassword: PASSWORD, newPassword: NEW_PASSWORD }),
    ];
    for (const req of requests) {
      const res = await req.expect(401);
      expectFailure(res.body, 401, 'Missing bearer token');
    }
  });
});
