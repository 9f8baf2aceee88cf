import { createTestApp, TestApp } from './support/test-app';
import {
  bearer,
  countAll,
  createActiveUser,
  createAdmin,
  CreatedAdmin,
  expectFailure,
  LoggedIn,
  PASSWORD,
  RegisteredUser,
  uniqueEmail,
} from './support/factories';

/**
 * quality.md "Bad input": every route answers bad input with the envelope and a 4xx that says
 * what is wrong, never a 500 and never a partial write. Table-driven: each body route below
 * gets each bad body, with valid credentials where the route needs them.
 */

interface Context {
  user: RegisteredUser & LoggedIn;
  superAdmin: CreatedAdmin;
  other: CreatedAdmin;
}

interface BodyRoute {
  method: 'post' | 'patch' | 'put';
  path: string | ((c: Context) => string);
  auth?: (c: Context) => string;
  /** A body the route accepts: the cases spoil one thing in it. */
  valid: (c: Context) => Record<string, unknown>;
  /** A string field of the body, for the wrong-type, huge, NUL and nesting cases. */
  stringField: string;
  booleanField?: string;
  /** What the valid body itself gets (the control: it passes validation). */
  control: number;
}

const userToken = (c: Context) => c.user.accessToken;
const adminToken = (c: Context) => c.superAdmin.accessToken;

/** In the order the controls run at the end (password changes and revocation last). */
const ROUTES: BodyRoute[] = [
  {
    method: 'post',
    path: '/api/v1/users/login',
    valid: (c) => ({ email: c.user.email, password: PASSWORD }),
    stringField: 'password',
    control: 200,
  },
  {
    method: 'post',
    path: '/api/v1/users/verify-email',
    valid: () => ({ token: 'not-a-real-verification-token' }),
    stringField: 'token',
    control: 401,
  },
  {
    method: 'post',
    path: '/api/v1/users/resend-verification',
    valid: () => ({ email: 'nobody@example.com' }),
    stringField: 'email',
    control: 200,
  },
  {
    method: 'post',
    path: '/api/v1/users/forgot-password',
    valid: () => ({ email: 'nobody@example.com' }),
    stringField: 'email',
    control: 200,
  },
  {
    method: 'post',
    path: '/api/v1/users/reset-password',
    valid: () => ({ token: 'not-a-real-reset-token', password: 'a brand new secret' }),
    stringField: 'password',
    control: 401,
  },
  {
    method: 'patch',
    path: '/api/v1/users/me',
    auth: userToken,
    valid: () => ({ fullName: 'Renamed User', position: 'CTO' }),
    stringField: 'fullName',
    control: 200,
  },
  {
    method: 'post',
    path: '/api/v1/admins/login',
    valid: (c) => ({ email: c.superAdmin.email, password: PASSWORD }),
    stringField: 'email',
    control: 200,
  },
  {
    method: 'post',
    path: '/api/v1/admins/forgot-password',
    valid: () => ({ email: 'nobody@example.com' }),
    stringField: 'email',
    control: 200,
  },
  {
    method: 'post',
    path: '/api/v1/admins/reset-password',
    valid: () => ({ token: 'not-a-real-reset-token', password: 'a brand new secret' }),
    stringField: 'token',
    control: 401,
  },
  {
    method: 'patch',
    path: '/api/v1/admins/me',
    auth: adminToken,
    valid: () => ({ fullName: 'Renamed Admin' }),
    stringField: 'fullName',
    control: 200,
  },
  {
    method: 'patch',
    path: (c) => `/api/v1/admins/${c.other.uuid}`,
    auth: adminToken,
    valid: () => ({ fullName: 'Other Admin', roleName: 'accounting', isActive: true }),
    stringField: 'fullName',
    booleanField: 'isActive',
    control: 200,
  },
  {
    method: 'post',
    path: '/api/v1/admins',
    auth: adminToken,
    valid: () => ({
      email: uniqueEmail('new-admin'),
      fullName: 'New Admin',
      password: PASSWORD,
      roleName: 'admin',
    }),
    stringField: 'fullName',
    control: 201,
  },
  {
    method: 'post',
    path: '/api/v1/refresh',
    valid: (c) => ({ refreshToken: c.user.refreshToken }),
    stringField: 'refreshToken',
    control: 200,
  },
  {
    method: 'put',
    path: '/api/v1/users/me/password',
    auth: userToken,
    valid: () => ({ currentPassword: PASSWORD, newPassword: 'a brand new secret' }),
    stringField: 'newPassword',
    control: 200,
  },
  {
    method: 'put',
    path: '/api/v1/admins/me/password',
    auth: adminToken,
    valid: () => ({ currentPassword: PASSWORD, newPassword: 'a brand new secret' }),
    stringField: 'currentPassword',
    control: 200,
  },
  {
    method: 'post',
    path: '/api/v1/revoke',
    valid: (c) => ({ refreshToken: c.user.refreshToken }),
    stringField: 'refreshToken',
    control: 200,
  },
  {
    method: 'post',
    path: '/api/v1/users/register',
    valid: () => ({ companyName: 'Acme', fullName: 'Ada Owner', email: uniqueEmail(), password: PASSWORD }),
    stringField: 'companyName',
    control: 201,
  },
];

interface BadBody {
  /** The raw bytes sent, with `content-type: application/json`. */
  body: string | Buffer;
  msg: string;
  /** For "Validation failed": the field the details must name. */
  field?: string;
}

interface Case {
  name: string;
  applies?: (r: BodyRoute) => boolean;
  build: (valid: Record<string, unknown>, r: BodyRoute) => BadBody;
}

const json = (value: unknown) => JSON.stringify(value);
/** `{"key":value,` + the valid body's fields: a raw key that JSON.stringify would not write. */
const withRawKey = (raw: string, valid: Record<string, unknown>) => `{${raw},${json(valid).slice(1)}`;

function nested(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = { level: value };
  return value;
}

const CASES: Case[] = [
  {
    name: 'malformed JSON',
    build: (v) => ({ body: json(v).slice(0, -1), msg: 'Malformed JSON in request body' }),
  },
  {
    name: 'invalid UTF-8 bytes',
    build: (v, r) => {
      const text = json({ ...v, [r.stringField]: 'XX' });
      const at = text.indexOf('"XX"') + 1;
      return {
        body: Buffer.concat([
          Buffer.from(text.slice(0, at)),
          Buffer.from([0xc3, 0x28, 0xff]),
          Buffer.from(text.slice(at + 2)),
        ]),
        msg: 'Request body is not valid UTF-8',
      };
    },
  },
  {
    name: 'a JSON array body',
    build: (v) => ({ body: json([v]), msg: 'Request body must be a JSON object' }),
  },
  {
    name: 'a JSON string body',
    build: () => ({ body: json('just a string'), msg: 'Request body must be a JSON object' }),
  },
  {
    name: 'a JSON null body',
    build: () => ({ body: 'null', msg: 'Request body must be a JSON object' }),
  },
  {
    name: 'a __proto__ key',
    build: (v) => ({
      body: withRawKey('"__proto__":{"isAdmin":true}', v),
      msg: 'Forbidden key (__proto__ or constructor.prototype) in request body',
    }),
  },
  {
    name: 'a constructor.prototype key',
    build: (v) => ({
      body: withRawKey('"constructor":{"prototype":{"isAdmin":true}}', v),
      msg: 'Forbidden key (__proto__ or constructor.prototype) in request body',
    }),
  },
  {
    name: 'an unknown field',
    build: (v) => ({ body: json({ ...v, isAdmin: true }), msg: 'Validation failed', field: 'isAdmin' }),
  },
  {
    name: 'a number for a string',
    build: (v, r) => ({
      body: json({ ...v, [r.stringField]: 12345 }),
      msg: 'Validation failed',
      field: r.stringField,
    }),
  },
  {
    name: 'an object for a string',
    build: (v, r) => ({
      body: json({ ...v, [r.stringField]: { a: 1 } }),
      msg: 'Validation failed',
      field: r.stringField,
    }),
  },
  {
    name: 'a string for a boolean',
    applies: (r) => r.booleanField !== undefined,
    build: (v, r) => ({
      body: json({ ...v, [r.booleanField as string]: 'true' }),
      msg: 'Validation failed',
      field: r.booleanField,
    }),
  },
  {
    name: 'a huge string (100 KB)',
    build: (v, r) => ({
      body: json({ ...v, [r.stringField]: 'a'.repeat(100 * 1024) }),
      msg: 'Validation failed',
      field: r.stringField,
    }),
  },
  {
    name: 'a NUL byte in a string',
    build: (v, r) => ({
      body: json({ ...v, [r.stringField]: 'abc\u0000def' }),
      msg: 'Strings must not contain NUL bytes',
    }),
  },
  {
    name: 'a NUL byte in a field name',
    build: (v) => ({ body: json({ ...v, 'x\u0000y': 'z' }), msg: 'Field names must not contain NUL bytes' }),
  },
  {
    name: 'a deeply nested object (depth 100)',
    build: (v, r) => ({
      body: json({ ...v, [r.stringField]: nested(100) }),
      msg: 'Request body is nested too deeply',
    }),
  },
  {
    name: 'an empty body with content-type application/json',
    build: () => ({ body: '', msg: 'Request body is empty but content-type is JSON' }),
  },
];

describe('Bad input on every body route: a 400 envelope, never a 500, never a write', () => {
  let t: TestApp;
  const c = {} as Context;
  let baseline: Record<string, number>;

  beforeAll(async () => {
    t = await createTestApp();
    c.user = await createActiveUser(t);
    c.superAdmin = await createAdmin(t, 'superAdmin');
    c.other = await createAdmin(t, 'admin');
    baseline = await countAll(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const send = (r: BodyRoute, body: string | Buffer) => {
    const path = typeof r.path === 'function' ? r.path(c) : r.path;
    const req = t.http()[r.method](path).set('content-type', 'application/json');
    if (r.auth) void req.set(...bearer(r.auth(c)));
    // superagent would JSON.stringify a Buffer sent as JSON: send its bytes as they are.
    return req.serialize((raw: string) => raw).send(body);
  };

  const label = (r: BodyRoute) =>
    `${r.method.toUpperCase()} ${typeof r.path === 'string' ? r.path : '/api/v1/admins/:uuid'}`;

  describe.each(ROUTES.map((r) => [label(r), r] as const))('%s', (_name, route) => {
    const cases = CASES.filter((k) => !k.applies || k.applies(route));

    it.each(cases.map((k) => [k.name, k] as const))('%s → 400', async (_caseName, k) => {
      const bad = k.build(route.valid(c), route);
      const res = await send(route, bad.body);
      expect({ status: res.status, msg: res.body.msg }).toEqual({ status: 400, msg: bad.msg });
      expectFailure(res.body, 400, bad.msg);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      if (bad.field) {
        expect(res.body.error.details).toEqual(
          expect.arrayContaining([
            { field: bad.field, messages: expect.arrayContaining([expect.any(String)]) },
          ]),
        );
      }
      expect(await countAll(t)).toEqual(baseline);
    });
  });

  describe('GET /api/v1/admins query values', () => {
    it.each([
      ['limit=abc', 'limit'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=1.5', 'limit'],
      ['page=-1', 'page'],
      ['page=0', 'page'],
      ['page=abc', 'page'],
      ['isActive=maybe', 'isActive'],
      ['roleName=root', 'roleName'],
    ])('%s → 400 naming %s', async (query, field) => {
      const res = await t
        .http()
        .get(`/api/v1/admins?${query}`)
        .set(...bearer(c.superAdmin.accessToken))
        .expect(400);
      expectFailure(res.body, 400, 'Validation failed');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([field]);
    });

    it.each(['sort=password:asc', 'sort=passwordHash:desc', 'sort=email:sideways', 'sort=email'])(
      '%s → 400 (sort fields come from a whitelist)',
      async (query) => {
        const res = await t
          .http()
          .get(`/api/v1/admins?${query}`)
          .set(...bearer(c.superAdmin.accessToken))
          .expect(400);
        expectFailure(
          res.body,
          400,
          'sort must be one of createdAt:asc|desc, email:asc|desc, fullName:asc|desc',
        );
      },
    );

    it('accepts good values (control)', async () => {
      const res = await t
        .http()
        .get('/api/v1/admins?page=1&limit=100&isActive=true&sort=email:asc&roleName=superAdmin')
        .set(...bearer(c.superAdmin.accessToken))
        .expect(200);
      expect(res.body).toMatchObject({ status: 'success', code: 200 });
      expect(res.body.data.meta).toEqual({ page: 1, limit: 100, totalItems: 1, totalPages: 1 });
      expect(res.body.data.items).toEqual([expect.objectContaining({ uuid: c.superAdmin.uuid })]);
    });
  });

  it('says what a field must be before its bounds', async () => {
    const res = await t
      .http()
      .post('/api/v1/users/register')
      .send({
        companyName: 12345,
        fullName: 'Ada',
        email: 'ada@example.com',
        password: 'correct horse battery',
      })
      .expect(400);
    expect(res.body.error.details).toEqual([
      {
        field: 'companyName',
        messages: [
          'companyName must be a string',
          'companyName must be shorter than or equal to 200 characters',
        ],
      },
    ]);
  });

  describe('invalid UUIDs in paths', () => {
    it.each([
      ['get', 'not-a-uuid'],
      ['get', '123'],
      ['get', "1' OR '1'='1"],
      ['patch', 'not-a-uuid'],
    ] as const)('%s /api/v1/admins/%s → 400', async (method, id) => {
      const req = t
        .http()
        [method](`/api/v1/admins/${encodeURIComponent(id)}`)
        .set(...bearer(c.superAdmin.accessToken));
      const res = await (method === 'patch' ? req.send({ fullName: 'Nobody' }) : req).expect(400);
      expectFailure(res.body, 400, /uuid is expected/);
      expect(await countAll(t)).toEqual(baseline);
    });

    it('a well-formed UUID that matches nothing is a 404 (control)', async () => {
      const res = await t
        .http()
        .get('/api/v1/admins/00000000-0000-4000-8000-000000000000')
        .set(...bearer(c.superAdmin.accessToken))
        .expect(404);
      expectFailure(res.body, 404);
    });
  });

  describe('controls: the valid body of each route passes validation', () => {
    it.each(ROUTES.map((r) => [label(r), r.control, r] as const))('%s → %i', async (_name, status, route) => {
      const res = await send(route, json(route.valid(c)));
      expect({ status: res.status, msg: res.body.msg }).toEqual({ status, msg: expect.any(String) });
      expect(res.body).toMatchObject({ status: status < 400 ? 'success' : 'failed', code: status });
      if (status < 400) expect(res.body.data).toEqual(expect.any(Object));
      else expectFailure(res.body, status);
    });
  });
});
