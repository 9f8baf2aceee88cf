import { createHash, createSecretKey, randomUUID } from 'node:crypto';
import * as jwt from 'jsonwebtoken';
import { Admin } from '../src/modules/admins/entities/admin.entity';
import { BlacklistService } from '../src/modules/auth/blacklist.service';
import { RevokedRefreshToken } from '../src/modules/auth/entities/revoked-refresh-token.entity';
import { User } from '../src/modules/users/entities/user.entity';
import { fakeDateAt } from './support/clock';
import { tokenFromLink } from './support/smtp-sink';
import { createTestApp, TEST_SECRETS, TestApp } from './support/test-app';
import {
  bearer,
  countAll,
  countRows,
  createActiveUser,
  createAdmin,
  CreatedAdmin,
  expectFailure,
  loginUser,
  PASSWORD,
  registerUser,
} from './support/factories';

const nowS = (): number => Math.floor(Date.now() / 1000);
const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex');
const b64url = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Signs `payload` (which carries its own `iat`/`exp`) with a test secret and algorithm. */
function forge(
  payload: Record<string, unknown>,
  secret: string = TEST_SECRETS.JWT_ACCESS_SECRET,
  algorithm: jwt.Algorithm = 'HS256',
): string {
  return jwt.sign(payload, createSecretKey(Buffer.from(secret, 'utf8')), { algorithm });
}

/** The decoded claims of a token, without verifying it. */
const claimsOf = (token: string): jwt.JwtPayload => jwt.decode(token) as jwt.JwtPayload;

/** The custom claims of a token (its registered `iat`/`exp` removed), for re-signing variants. */
function customClaims(token: string): Record<string, unknown> {
  const { iat: _iat, exp: _exp, ...rest } = claimsOf(token);
  return rest;
}

const ACCESS_TOKEN_RESULT = { accessToken: expect.any(String), tokenType: 'Bearer', expiresIn: 60 };

describe('Tokens: access-token guard, refresh, revoke, blacklist', () => {
  let t: TestApp;
  /** A superAdmin that stays one, to act on other admins. */
  let root: CreatedAdmin;

  /** Runs SQL written with `?` placeholders on either database. */
  const sql = (text: string, params: unknown[] = []): Promise<Array<Record<string, unknown>>> => {
    let n = 0;
    const query = t.dataSource.options.type === 'postgres' ? text.replace(/\?/g, () => `$${++n}`) : text;
    return t.dataSource.query(query, params);
  };

  const me = (token: string) =>
    t
      .http()
      .get('/api/v1/users/me')
      .set(...bearer(token));
  const refresh = (refreshToken: string) => t.http().post('/api/v1/refresh').send({ refreshToken });
  const revoke = (refreshToken: string) => t.http().post('/api/v1/revoke').send({ refreshToken });
  const expectRevoked = async (refreshToken: string) =>
    expectFailure((await refresh(refreshToken).expect(401)).body, 401, 'Refresh token has been revoked');
  const blacklistRows = () => t.dataSource.getRepository(RevokedRefreshToken).find();

  beforeAll(async () => {
    t = await createTestApp();
    root = await createAdmin(t, 'superAdmin');
  });
  afterAll(async () => {
    await t.close();
  });

  describe('the access-token guard', () => {
    it('refuses a request without an Authorization header: 401 "Missing bearer token"', async () => {
      const res = await t.http().get('/api/v1/users/me').expect(401);
      expectFailure(res.body, 401, 'Missing bearer token');
      const admin = await t.http().get('/api/v1/admins/me').expect(401);
      expectFailure(admin.body, 401, 'Missing bearer token');
    });

    it('refuses malformed tokens and a non-Bearer scheme with 401', async () => {
      for (const token of ['not-a-jwt', 'a.b.c', 'eyJhbGciOiJIUzI1NiJ9.e30']) {
        const res = await me(token).expect(401);
        expectFailure(res.body, 401, 'Invalid access token');
      }
      const basic = await t
        .http()
        .get('/api/v1/users/me')
        .set('authorization', `Basic ${Buffer.from('a:b').toString('base64')}`)
        .expect(401);
      expectFailure(basic.body, 401);
    });

    it('accepts its own access token, and refuses the same claims once expired (401 "Access token has expired")', async () => {
      const user = await createActiveUser(t);
      const ok = await me(user.accessToken).expect(200);
      expect(ok.body).toMatchObject({
        status: 'success',
        code: 200,
        data: { user: { uuid: user.userUuid } },
      });

      const expired = forge({ ...customClaims(user.accessToken), iat: nowS() - 120, exp: nowS() - 60 });
      const res = await me(expired).expect(401);
      expectFailure(res.body, 401, 'Access token has expired');
    });

    it('allows at most 5 s of clock leeway: expired 3 s ago is accepted, 30 s ago is refused', async () => {
      const user = await createActiveUser(t);
      const claims = customClaims(user.accessToken);

      const justExpired = forge({ ...claims, iat: nowS() - 63, exp: nowS() - 3 });
      const ok = await me(justExpired).expect(200);
      expect(ok.body).toMatchObject({
        status: 'success',
        code: 200,
        data: { user: { uuid: user.userUuid } },
      });

      const longExpired = forge({ ...claims, iat: nowS() - 90, exp: nowS() - 30 });
      const res = await me(longExpired).expect(401);
      expectFailure(res.body, 401, 'Access token has expired');
    });

    it('refuses a token signed with another secret (401)', async () => {
      const user = await createActiveUser(t);
      const claims = { ...customClaims(user.accessToken), iat: nowS(), exp: nowS() + 60 };
      for (const secret of ['an-entirely-different-secret-0123456789', TEST_SECRETS.JWT_REFRESH_SECRET]) {
        const res = await me(forge(claims, secret)).expect(401);
        expectFailure(res.body, 401, 'Invalid access token');
      }
    });

    it('refuses a refresh token used as an access token (401), also when re-signed with the access secret', async () => {
      const user = await createActiveUser(t);
      const res = await me(user.refreshToken).expect(401);
      expectFailure(res.body, 401, 'Invalid access token');

      // A refresh-shaped payload is not an access token, whatever it is signed with.
      const refreshShaped = forge({ ...customClaims(user.refreshToken), iat: nowS(), exp: nowS() + 60 });
      const reshaped = await me(refreshShaped).expect(401);
      expectFailure(reshaped.body, 401, 'Invalid access token');

      const admin = await createAdmin(t, 'admin');
      const adminRes = await t
        .http()
        .get('/api/v1/admins/me')
        .set(...bearer(admin.refreshToken))
        .expect(401);
      expectFailure(adminRes.body, 401, 'Invalid access token');
    });

    it('refuses a verification token and a reset token used as access tokens (401)', async () => {
      const user = await registerUser(t);
      const verification = tokenFromLink(await t.smtp.waitFor(user.email, /verify/i), '/verify-email');
      await t.http().post('/api/v1/users/verify-email').send({ token: verification }).expect(200);
      await t.http().post('/api/v1/users/forgot-password').send({ email: user.email }).expect(200);
      const reset = tokenFromLink(await t.smtp.waitFor(user.email, /reset/i), '/reset-password');

      for (const token of [verification, reset]) {
        const res = await me(token).expect(401);
        expectFailure(res.body, 401, 'Invalid access token');
      }
    });

    it('refuses an unsigned token (alg: none) with 401', async () => {
      const user = await createActiveUser(t);
      const payload = { ...customClaims(user.accessToken), iat: nowS(), exp: nowS() + 60 };
      for (const alg of ['none', 'None', 'NONE']) {
        const unsigned = `${b64url({ alg, typ: 'JWT' })}.${b64url(payload)}.`;
        const res = await me(unsigned).expect(401);
        expectFailure(res.body, 401, 'Invalid access token');
      }
    });

    it('pins the algorithm to HS256: HS384 and HS512 tokens with the right secret are refused (401)', async () => {
      const user = await createActiveUser(t);
      const payload = { ...customClaims(user.accessToken), iat: nowS(), exp: nowS() + 60 };
      const hs256 = await me(forge(payload)).expect(200);
      expect(hs256.body.data.user.uuid).toBe(user.userUuid);
      for (const algorithm of ['HS384', 'HS512'] as const) {
        const res = await me(forge(payload, TEST_SECRETS.JWT_ACCESS_SECRET, algorithm)).expect(401);
        expectFailure(res.body, 401, 'Invalid access token');
      }
    });

    it('refuses a well-signed access token whose user does not exist (401)', async () => {
      const token = forge({
        userUuid: randomUUID(),
        contactUuid: randomUUID(),
        companyUuid: randomUUID(),
        isAdmin: false,
        iat: nowS(),
        exp: nowS() + 60,
      });
      const res = await me(token).expect(401);
      expectFailure(res.body, 401);
    });

    it('refuses a user token on an admin route and an admin token on a user route (403)', async () => {
      const user = await createActiveUser(t);
      const admin = await createAdmin(t, 'admin');

      const userOnAdmin = await t
        .http()
        .get('/api/v1/admins/me')
        .set(...bearer(user.accessToken))
        .expect(403);
      expectFailure(userOnAdmin.body, 403, 'This route is for admins only');
      const userOnAdminList = await t
        .http()
        .get('/api/v1/admins')
        .set(...bearer(user.accessToken))
        .expect(403);
      expectFailure(userOnAdminList.body, 403, 'This route is for admins only');

      const adminOnUser = await me(admin.accessToken).expect(403);
      expectFailure(adminOnUser.body, 403, 'This route is for users only');
      const rootOnUser = await me(root.accessToken).expect(403);
      expectFailure(rootOnUser.body, 403, 'This route is for users only');
    });
  });

  describe('POST /api/v1/refresh', () => {
    it('issues a new access token from a refresh token in the body, with claims taken from the database', async () => {
      const user = await createActiveUser(t);
      const counts = await countAll(t);
      const res = await refresh(user.refreshToken).expect(200);
      expect(res.body).toEqual({
        status: 'success',
        code: 200,
        msg: 'Access token refreshed',
        data: ACCESS_TOKEN_RESULT,
      });

      const [row] = await sql(
        'SELECT u.uuid AS user_uuid, c.uuid AS contact_uuid, co.uuid AS company_uuid FROM users u ' +
          'JOIN contacts c ON c.id = u.contact_id JOIN companies co ON co.id = u.company_id WHERE u.uuid = ?',
        [user.userUuid],
      );
      const claims = claimsOf(res.body.data.accessToken);
      expect(claims).toEqual({
        userUuid: row.user_uuid,
        contactUuid: row.contact_uuid,
        companyUuid: row.company_uuid,
        isAdmin: false,
        iat: expect.any(Number),
        exp: expect.any(Number),
      });
      expect(claims.exp! - claims.iat!).toBe(60);
      expect(jwt.decode(res.body.data.accessToken, { complete: true })?.header.alg).toBe('HS256');

      const profile = await me(res.body.data.accessToken).expect(200);
      expect(profile.body.data.user).toMatchObject({ uuid: user.userUuid, email: user.email });
      // Refreshing writes nothing, and the refresh token stays usable.
      expect(await countAll(t)).toEqual(counts);
      await refresh(user.refreshToken).expect(200);
    });

    it('accepts the refresh token as an Authorization: Bearer header', async () => {
      const user = await createActiveUser(t);
      const res = await t
        .http()
        .post('/api/v1/refresh')
        .set(...bearer(user.refreshToken))
        .expect(200);
      expect(res.body).toMatchObject({ status: 'success', code: 200, data: ACCESS_TOKEN_RESULT });
      const profile = await me(res.body.data.accessToken).expect(200);
      expect(profile.body.data.user.uuid).toBe(user.userUuid);
    });

    it('refreshes an admin token with only adminUuid, roleId, roleName as custom claims', async () => {
      const admin = await createAdmin(t, 'accounting');
      const res = await t
        .http()
        .post('/api/v1/refresh')
        .send({ refreshToken: admin.refreshToken })
        .expect(200);
      expect(res.body).toMatchObject({ status: 'success', code: 200, data: ACCESS_TOKEN_RESULT });
      expect(claimsOf(res.body.data.accessToken)).toEqual({
        adminUuid: admin.uuid,
        roleId: 3,
        roleName: 'accounting',
        iat: expect.any(Number),
        exp: expect.any(Number),
      });
      const profile = await t
        .http()
        .get('/api/v1/admins/me')
        .set(...bearer(res.body.data.accessToken))
        .expect(200);
      expect(profile.body.data).toMatchObject({ uuid: admin.uuid, role: { id: 3, name: 'accounting' } });
    });

    it('answers 400 when no refresh token is given', async () => {
      const empty = await t.http().post('/api/v1/refresh').send({}).expect(400);
      expectFailure(empty.body, 400, 'refreshToken is required (in the body or as a Bearer header)');
      const none = await t.http().post('/api/v1/refresh').expect(400);
      expectFailure(none.body, 400, 'refreshToken is required (in the body or as a Bearer header)');
    });

    it('answers 401 for a bad signature, another kind of token, or an expired refresh token', async () => {
      const user = await createActiveUser(t);
      const claims = customClaims(user.refreshToken);
      const candidates = [
        forge({ ...claims, iat: nowS(), exp: nowS() + 3600 }, 'an-entirely-different-secret-0123456789'),
        forge({ ...claims, iat: nowS(), exp: nowS() + 3600 }, TEST_SECRETS.JWT_ACCESS_SECRET),
        forge({ ...claims, iat: nowS(), exp: nowS() + 3600 }, TEST_SECRETS.JWT_REFRESH_SECRET, 'HS512'),
        forge({ ...claims, iat: nowS() - 7200, exp: nowS() - 60 }, TEST_SECRETS.JWT_REFRESH_SECRET),
        user.accessToken,
        `${user.refreshToken.slice(0, -2)}xx`,
      ];
      for (const token of candidates) {
        const res = await refresh(token).expect(401);
        expectFailure(res.body, 401, 'Invalid or expired refresh token');
      }
      const header = await t
        .http()
        .post('/api/v1/refresh')
        .set(...bearer(candidates[0]))
        .expect(401);
      expectFailure(header.body, 401, 'Invalid or expired refresh token');
    });
  });

  describe('POST /api/v1/revoke', () => {
    it('revokes a refresh token: later refreshes answer 401 "Refresh token has been revoked"', async () => {
      const user = await createActiveUser(t);
      await refresh(user.refreshToken).expect(200);

      const res = await revoke(user.refreshToken).expect(200);
      expect(res.body).toEqual({ status: 'success', code: 200, msg: 'Refresh token revoked', data: {} });

      const viaBody = await refresh(user.refreshToken).expect(401);
      expectFailure(viaBody.body, 401, 'Refresh token has been revoked');
      const viaHeader = await t
        .http()
        .post('/api/v1/refresh')
        .set(...bearer(user.refreshToken))
        .expect(401);
      expectFailure(viaHeader.body, 401, 'Refresh token has been revoked');
    });

    it('is idempotent, and stores one row holding a SHA-256 of the token and its expiry, never the token', async () => {
      const user = await createActiveUser(t);
      const before = await countRows(t, 'refresh_token_blacklist');

      const first = await revoke(user.refreshToken).expect(200);
      expect(first.body).toMatchObject({ status: 'success', code: 200, data: {} });
      const second = await t
        .http()
        .post('/api/v1/revoke')
        .set(...bearer(user.refreshToken))
        .expect(200);
      expect(second.body).toMatchObject({ status: 'success', code: 200, data: {} });

      expect(await countRows(t, 'refresh_token_blacklist')).toBe(before + 1);
      const rows = await sql('SELECT * FROM refresh_token_blacklist WHERE token_hash = ?', [
        sha256(user.refreshToken),
      ]);
      expect(rows).toHaveLength(1);
      expect(rows[0].token_hash).toMatch(/^[0-9a-f]{64}$/);

      const [entity] = (await blacklistRows()).filter((r) => r.tokenHash === sha256(user.refreshToken));
      expect(entity.expiresAt.getTime()).toBe(claimsOf(user.refreshToken).exp! * 1000);

      // Neither the token nor its signature appears anywhere in the table.
      const everything = JSON.stringify(await sql('SELECT * FROM refresh_token_blacklist'));
      expect(everything).not.toContain(user.refreshToken);
      expect(everything).not.toContain(user.refreshToken.split('.')[2]);
    });

    it('answers 401 for a bad signature and 400 without a token, and writes nothing', async () => {
      const user = await createActiveUser(t);
      const before = await countRows(t, 'refresh_token_blacklist');
      const forged = forge(
        { ...customClaims(user.refreshToken), iat: nowS(), exp: nowS() + 3600 },
        'an-entirely-different-secret-0123456789',
      );
      const bad = await revoke(forged).expect(401);
      expectFailure(bad.body, 401, 'Invalid or expired refresh token');
      const accessAsRefresh = await revoke(user.accessToken).expect(401);
      expectFailure(accessAsRefresh.body, 401, 'Invalid or expired refresh token');
      const none = await t.http().post('/api/v1/revoke').send({}).expect(400);
      expectFailure(none.body, 400);
      expect(await countRows(t, 'refresh_token_blacklist')).toBe(before);

      // The genuine token still works.
      await refresh(user.refreshToken).expect(200);
    });

    it('purgeExpired() deletes only the entries whose expiry has passed', async () => {
      const blacklist = t.app.get(BlacklistService);
      const expired = `expired-${randomUUID()}`;
      const live = `live-${randomUUID()}`;
      await blacklist.revoke(expired, new Date(Date.now() - 60_000));
      await blacklist.revoke(live, new Date(Date.now() + 3_600_000));
      expect(await blacklist.isRevoked(expired)).toBe(true);
      expect(await blacklist.isRevoked(live)).toBe(true);
      const before = await blacklistRows();

      expect(await blacklist.purgeExpired()).toBe(1);

      const after = await blacklistRows();
      const hashes = after.map((r) => r.tokenHash);
      expect(after).toHaveLength(before.length - 1);
      expect(hashes).not.toContain(sha256(expired));
      expect(hashes).toContain(sha256(live));
      for (const row of after) expect(row.expiresAt.getTime()).toBeGreaterThan(Date.now());
      expect(await blacklist.purgeExpired()).toBe(0);
    });
  });

  describe('changes to the subject take effect within the access token’s life', () => {
    it('a user suspended after login: access token 401, refresh 401, login 403', async () => {
      const user = await createActiveUser(t);
      await me(user.accessToken).expect(200);
      await sql("UPDATE users SET status = 'suspended' WHERE uuid = ?", [user.userUuid]);
      const stored = await t.dataSource.getRepository(User).findOneByOrFail({ uuid: user.userUuid });
      expect(stored.status).toBe('suspended');

      const access = await me(user.accessToken).expect(401);
      expectFailure(access.body, 401);
      const refreshed = await refresh(user.refreshToken).expect(401);
      expectFailure(refreshed.body, 401);

      const login = await t
        .http()
        .post('/api/v1/users/login')
        .send({ email: user.email, password: PASSWORD })
        .expect(403);
      expectFailure(login.body, 403, 'User account is suspended');
      const after = await t.dataSource.getRepository(User).findOneByOrFail({ uuid: user.userUuid });
      expect(after.lastLoginAt?.getTime()).toBe(stored.lastLoginAt?.getTime());
    });

    it('an admin deactivated after login: 401 on /admins/me, refresh 401, login 403', async () => {
      const admin = await createAdmin(t, 'admin');
      await t
        .http()
        .get('/api/v1/admins/me')
        .set(...bearer(admin.accessToken))
        .expect(200);

      const patched = await t
        .http()
        .patch(`/api/v1/admins/${admin.uuid}`)
        .set(...bearer(root.accessToken))
        .send({ isActive: false })
        .expect(200);
      expect(patched.body).toMatchObject({
        status: 'success',
        code: 200,
        data: { uuid: admin.uuid, isActive: false },
      });
      const stored = await t.dataSource.getRepository(Admin).findOneByOrFail({ uuid: admin.uuid });
      expect(stored.isActive).toBe(false);

      const access = await t
        .http()
        .get('/api/v1/admins/me')
        .set(...bearer(admin.accessToken))
        .expect(401);
      expectFailure(access.body, 401);
      const refreshed = await refresh(admin.refreshToken).expect(401);
      expectFailure(refreshed.body, 401);
      const login = await t
        .http()
        .post('/api/v1/admins/login')
        .send({ email: admin.email, password: PASSWORD })
        .expect(403);
      expectFailure(login.body, 403, 'Admin account is deactivated');
    });

    it('a role changed by another superAdmin applies to the same, unexpired token at once', async () => {
      const admin = await createAdmin(t, 'superAdmin');
      const list = await t
        .http()
        .get('/api/v1/admins')
        .set(...bearer(admin.accessToken))
        .expect(200);
      expect(list.body).toMatchObject({ status: 'success', code: 200, data: { items: expect.any(Array) } });
      expect(list.body.data.items).toContainEqual(
        expect.objectContaining({ uuid: admin.uuid, role: { id: 1, name: 'superAdmin' } }),
      );

      const patched = await t
        .http()
        .patch(`/api/v1/admins/${admin.uuid}`)
        .set(...bearer(root.accessToken))
        .send({ roleName: 'accounting' })
        .expect(200);
      expect(patched.body).toMatchObject({
        status: 'success',
        code: 200,
        data: { uuid: admin.uuid, role: { id: 3, name: 'accounting' }, isActive: true },
      });
      const stored = await t.dataSource.getRepository(Admin).findOneByOrFail({ uuid: admin.uuid });
      expect(stored.role).toEqual({ id: 3, name: 'accounting' });

      // The token still claims superAdmin; the guard reads the role from the database.
      expect(claimsOf(admin.accessToken).roleName).toBe('superAdmin');
      const denied = await t
        .http()
        .get('/api/v1/admins')
        .set(...bearer(admin.accessToken))
        .expect(403);
      expectFailure(denied.body, 403, 'Your role does not allow this');
      const own = await t
        .http()
        .get('/api/v1/admins/me')
        .set(...bearer(admin.accessToken))
        .expect(200);
      expect(own.body).toMatchObject({
        status: 'success',
        code: 200,
        data: { uuid: admin.uuid, role: { id: 3, name: 'accounting' } },
      });

      // A refreshed token carries the stored role.
      const refreshed = await refresh(admin.refreshToken).expect(200);
      expect(claimsOf(refreshed.body.data.accessToken)).toMatchObject({
        adminUuid: admin.uuid,
        roleId: 3,
        roleName: 'accounting',
      });
    });
  });

  describe('tokens without exp are refused (401), whatever their kind', () => {
    const withoutExp = (claims: Record<string, unknown>, secret: string): string =>
      forge({ ...claims, iat: nowS() }, secret);

    it('an access token without exp: 401 "Invalid access token"', async () => {
      const user = await createActiveUser(t);
      const noExp = withoutExp(customClaims(user.accessToken), TEST_SECRETS.JWT_ACCESS_SECRET);
      expect(claimsOf(noExp)).not.toHaveProperty('exp');
      const res = await me(noExp).expect(401);
      expectFailure(res.body, 401, 'Invalid access token');

      const adminNoExp = withoutExp(customClaims(root.accessToken), TEST_SECRETS.JWT_ACCESS_SECRET);
      const admin = await t
        .http()
        .get('/api/v1/admins/me')
        .set(...bearer(adminNoExp))
        .expect(401);
      expectFailure(admin.body, 401, 'Invalid access token');
    });

    it('a refresh token without exp: 401 on refresh and on revoke', async () => {
      const user = await createActiveUser(t);
      const noExp = withoutExp(customClaims(user.refreshToken), TEST_SECRETS.JWT_REFRESH_SECRET);
      expectFailure((await refresh(noExp).expect(401)).body, 401, 'Invalid or expired refresh token');
      expectFailure((await revoke(noExp).expect(401)).body, 401, 'Invalid or expired refresh token');
    });

    it('verification, invitation and reset tokens without exp: 401, and nothing changes', async () => {
      const user = await registerUser(t);
      const verification = tokenFromLink(await t.smtp.waitFor(user.email, /verify/i), '/verify-email');
      const verify = await t
        .http()
        .post('/api/v1/users/verify-email')
        .send({ token: withoutExp(customClaims(verification), TEST_SECRETS.JWT_VERIFICATION_SECRET) })
        .expect(401);
      expectFailure(verify.body, 401);

      await t.http().post('/api/v1/users/forgot-password').send({ email: user.email }).expect(200);
      const reset = tokenFromLink(await t.smtp.waitFor(user.email, /reset/i), '/reset-password');
      const resetRes = await t
        .http()
        .post('/api/v1/users/reset-password')
        .send({
          token: withoutExp(customClaims(reset), TEST_SECRETS.JWT_RESET_SECRET),
          password: 'a brand new secret',
        })
        .expect(401);
      expectFailure(resetRes.body, 401);

      await t.http().post('/api/v1/admins/forgot-password').send({ email: root.email }).expect(200);
      const adminReset = tokenFromLink(await t.smtp.waitFor(root.email, /reset/i), '/admin/reset-password');
      const adminRes = await t
        .http()
        .post('/api/v1/admins/reset-password')
        .send({
          token: withoutExp(customClaims(adminReset), TEST_SECRETS.JWT_RESET_SECRET),
          password: 'a brand new secret',
        })
        .expect(401);
      expectFailure(adminRes.body, 401);

      const owner = await createActiveUser(t);
      const email = `invitee-${randomUUID()}@example.com`;
      await t
        .http()
        .post(`/api/v1/companies/${owner.companyUuid}/users`)
        .set(...bearer(owner.accessToken))
        .send({ email, fullName: 'Ivy Invitee' })
        .expect(201);
      const invitation = tokenFromLink(await t.smtp.waitFor(email, /invited/i), '/accept-invite');
      const accept = await t
        .http()
        .post('/api/v1/users/accept-invite')
        .send({
          token: withoutExp(customClaims(invitation), TEST_SECRETS.JWT_VERIFICATION_SECRET),
          password: 'a brand new secret',
        })
        .expect(401);
      expectFailure(accept.body, 401);

      const rows = await sql(
        'SELECT status, email_verified_at, password_version FROM users WHERE email IN (?, ?)',
        [user.email, email],
      );
      for (const row of rows) {
        expect(row).toMatchObject({ status: 'pending', email_verified_at: null, password_version: 0 });
      }
      const admin = await t.dataSource.getRepository(Admin).findOneByOrFail({ uuid: root.uuid });
      expect(admin.passwordVersion).toBe(0);
    });
  });

  describe('a password change ends the refresh tokens issued before it (401), not those issued after', () => {
    /**
     * The app's clock (fakeDateAt) 100 ms into the next whole second; each `step()` moves it 100 ms
     * on. What the test does between steps happens at one instant, and the steps share one second.
     */
    function clockInOneSecond(): { step: () => void } {
      let now = Math.ceil((Date.now() + 1) / 1000) * 1000 + 100;
      const clock = fakeDateAt(now);
      return { step: () => clock.set((now += 100)) };
    }
    afterEach(() => jest.useRealTimers());

    const changedAtMs = async (table: 'users' | 'admins', uuid: string): Promise<number> => {
      const entity = table === 'users' ? User : Admin;
      const row = await t.dataSource.getRepository<User | Admin>(entity).findOneByOrFail({ uuid });
      expect(row.passwordChangedAt).toBeInstanceOf(Date);
      return row.passwordChangedAt!.getTime();
    };

    /** Refresh tokens forged just before and just after the recorded change (same second or not). */
    async function expectCutAt(table: 'users' | 'admins', uuid: string, isAdmin: boolean): Promise<void> {
      const at = await changedAtMs(table, uuid);
      const sign = (iat: number) =>
        forge(
          { uuid, isAdmin, jti: randomUUID(), iat, exp: Math.floor(iat) + 3600 },
          TEST_SECRETS.JWT_REFRESH_SECRET,
        );
      for (const iat of [(at - 1) / 1000, Math.floor((at - 1) / 1000)]) {
        expectFailure((await refresh(sign(iat)).expect(401)).body, 401, 'Refresh token has been revoked');
      }
      await refresh(sign((at + 1) / 1000)).expect(200);
    }

    it('PUT /users/me/password', async () => {
      const user = await createActiveUser(t);
      const clock = clockInOneSecond();
      const before = await loginUser(t, user.email);
      clock.step();
      await t
        .http()
        .put('/api/v1/users/me/password')
        .set(...bearer(before.accessToken))
        .send({ currentPassword: PASSWORD, newPassword: 'a brand new secret' })
        .expect(200);
      await expectRevoked(before.refreshToken);
      await expectRevoked(user.refreshToken);

      // A login right after the change, in the same second, keeps working.
      clock.step();
      const after = await loginUser(t, user.email, 'a brand new secret');
      await refresh(after.refreshToken).expect(200);
      await expectCutAt('users', user.userUuid, false);
    });

    it('POST /users/reset-password', async () => {
      const user = await createActiveUser(t);
      await t.http().post('/api/v1/users/forgot-password').send({ email: user.email }).expect(200);
      const token = tokenFromLink(await t.smtp.waitFor(user.email, /reset/i), '/reset-password');
      const clock = clockInOneSecond();
      const before = await loginUser(t, user.email);
      clock.step();
      await t
        .http()
        .post('/api/v1/users/reset-password')
        .send({ token, password: 'a brand new secret' })
        .expect(200);
      await expectRevoked(before.refreshToken);
      await expectRevoked(user.refreshToken);
      clock.step();
      const after = await loginUser(t, user.email, 'a brand new secret');
      await refresh(after.refreshToken).expect(200);
      await expectCutAt('users', user.userUuid, false);
    });

    it('PUT /admins/me/password', async () => {
      const admin = await createAdmin(t, 'accounting');
      const clock = clockInOneSecond();
      const login = await t
        .http()
        .post('/api/v1/admins/login')
        .send({ email: admin.email, password: PASSWORD })
        .expect(200);
      clock.step();
      await t
        .http()
        .put('/api/v1/admins/me/password')
        .set(...bearer(login.body.data.accessToken))
        .send({ currentPassword: PASSWORD, newPassword: 'a brand new secret' })
        .expect(200);
      for (const old of [admin.refreshToken, login.body.data.refreshToken as string]) {
        expectFailure((await refresh(old).expect(401)).body, 401, 'Refresh token has been revoked');
      }
      clock.step();
      const after = await t
        .http()
        .post('/api/v1/admins/login')
        .send({ email: admin.email, password: 'a brand new secret' })
        .expect(200);
      await refresh(after.body.data.refreshToken).expect(200);
      await expectCutAt('admins', admin.uuid, true);
    });

    it('POST /admins/reset-password', async () => {
      const admin = await createAdmin(t, 'admin');
      await t.http().post('/api/v1/admins/forgot-password').send({ email: admin.email }).expect(200);
      const token = tokenFromLink(await t.smtp.waitFor(admin.email, /reset/i), '/admin/reset-password');
      await t
        .http()
        .post('/api/v1/admins/reset-password')
        .send({ token, password: 'a brand new secret' })
        .expect(200);
      await expectRevoked(admin.refreshToken);
      const after = await t
        .http()
        .post('/api/v1/admins/login')
        .send({ email: admin.email, password: 'a brand new secret' })
        .expect(200);
      await refresh(after.body.data.refreshToken).expect(200);
      await expectCutAt('admins', admin.uuid, true);
    });

    it('POST /users/accept-invite', async () => {
      const owner = await createActiveUser(t);
      const email = `accepter-${randomUUID()}@example.com`;
      const created = await t
        .http()
        .post(`/api/v1/companies/${owner.companyUuid}/users`)
        .set(...bearer(owner.accessToken))
        .send({ email, fullName: 'Ace Accepter' })
        .expect(201);
      const uuid = created.body.data.uuid as string;
      const invitation = tokenFromLink(await t.smtp.waitFor(email, /invited/i), '/accept-invite');
      // A genuine refresh token of the member from before the acceptance (it could not log in yet).
      const earlier = forge(
        { uuid, isAdmin: false, jti: randomUUID(), iat: nowS() - 5, exp: nowS() + 3600 },
        TEST_SECRETS.JWT_REFRESH_SECRET,
      );
      await t
        .http()
        .post('/api/v1/users/accept-invite')
        .send({ token: invitation, password: 'a brand new secret' })
        .expect(200);
      expectFailure((await refresh(earlier).expect(401)).body, 401, 'Refresh token has been revoked');
      const after = await loginUser(t, email, 'a brand new secret');
      await refresh(after.refreshToken).expect(200);
      await expectCutAt('users', uuid, false);
    });

    it('a subject whose password never changed keeps its refresh tokens, whatever their iat', async () => {
      const user = await createActiveUser(t);
      const stored = await t.dataSource.getRepository(User).findOneByOrFail({ uuid: user.userUuid });
      expect(stored.passwordChangedAt).toBeNull();
      await refresh(user.refreshToken).expect(200);
      const old = forge(
        { ...customClaims(user.refreshToken), iat: nowS() - 3600, exp: nowS() + 60 },
        TEST_SECRETS.JWT_REFRESH_SECRET,
      );
      await refresh(old).expect(200);
    });
  });
});
