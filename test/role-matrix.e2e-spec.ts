import { ADMIN_ROLE_NAMES, AdminRoleName } from '../src/modules/admins/entities/admin-role.entity';
import { Admin } from '../src/modules/admins/entities/admin.entity';
import {
  bearer,
  createActiveUser,
  createAdmin,
  CreatedAdmin,
  expectFailure,
  PASSWORD,
  uniqueEmail,
} from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

/**
 * The admin role matrix of auth.md, one entry per route. An area that adds admin routes
 * appends its entries here (and, when its paths need ids, the fixtures it needs in
 * `createFixtures`); the coverage test at the bottom fails while an admin route of the router
 * has no entry.
 */
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

interface Fixtures {
  /** An admin (role `admin`) that the routes on `/admins/:uuid` read and update. */
  adminUuid: string;
}

interface MatrixEntry {
  /** The row of the matrix in auth.md. */
  row: string;
  method: Method;
  /** The route as the router declares it (`:uuid` …), for the coverage check. */
  route: string;
  /** The concrete path called. */
  path: (f: Fixtures) => string;
  /** A valid body, built per call (so a create never collides with an earlier one). */
  body?: (f: Fixtures) => object;
  /** The success status of an allowed call. */
  status: number;
  allowed: readonly AdminRoleName[];
  /** For writes: checks the database after an allowed call (`data` is the response's). */
  written?: (
    t: TestApp,
    ctx: { f: Fixtures; caller: CreatedAdmin; data: Record<string, unknown> },
  ) => Promise<void>;
}

const adminRow = (t: TestApp, uuid: string) =>
  t.dataSource.getRepository(Admin).findOneOrFail({ where: { uuid } });

const ALL: readonly AdminRoleName[] = ADMIN_ROLE_NAMES;
const SUPER: readonly AdminRoleName[] = ['superAdmin'];

const OWN_PROFILE = 'own profile, password, notifications';
const ADMINS = 'admins and roles';

const MATRIX: MatrixEntry[] = [
  {
    row: OWN_PROFILE,
    method: 'get',
    route: '/api/v1/admins/me',
    path: () => '/api/v1/admins/me',
    status: 200,
    allowed: ALL,
  },
  {
    row: OWN_PROFILE,
    method: 'patch',
    route: '/api/v1/admins/me',
    path: () => '/api/v1/admins/me',
    body: () => ({ fullName: 'Matrix Caller' }),
    status: 200,
    allowed: ALL,
    written: async (t, { caller }) => expect((await adminRow(t, caller.uuid)).fullName).toBe('Matrix Caller'),
  },
  {
    row: OWN_PROFILE,
    method: 'put',
    route: '/api/v1/admins/me/password',
    path: () => '/api/v1/admins/me/password',
    // The same password again: a real change (the version moves on) that keeps the caller's login.
    body: () => ({ currentPassword: PASSWORD, newPassword: PASSWORD }),
    status: 200,
    allowed: ALL,
    written: async (t, { caller }) => expect((await adminRow(t, caller.uuid)).passwordVersion).toBe(1),
  },
  // `/admins/notification` does not exist yet: its area appends its entries here.
  {
    row: ADMINS,
    method: 'get',
    route: '/api/v1/admins',
    path: () => '/api/v1/admins',
    status: 200,
    allowed: SUPER,
  },
  {
    row: ADMINS,
    method: 'post',
    route: '/api/v1/admins',
    path: () => '/api/v1/admins',
    body: () => ({
      email: uniqueEmail('matrix'),
      fullName: 'Made By Matrix',
      password: PASSWORD,
      roleName: 'admin',
    }),
    status: 201,
    allowed: SUPER,
    written: async (t, { data }) =>
      expect(await adminRow(t, data.uuid as string)).toMatchObject({ fullName: 'Made By Matrix', roleId: 2 }),
  },
  {
    row: ADMINS,
    method: 'get',
    route: '/api/v1/admins/roles',
    path: () => '/api/v1/admins/roles',
    status: 200,
    allowed: SUPER,
  },
  {
    row: ADMINS,
    method: 'get',
    route: '/api/v1/admins/:uuid',
    path: (f) => `/api/v1/admins/${f.adminUuid}`,
    status: 200,
    allowed: SUPER,
  },
  {
    row: ADMINS,
    method: 'patch',
    route: '/api/v1/admins/:uuid',
    path: (f) => `/api/v1/admins/${f.adminUuid}`,
    body: () => ({ fullName: 'Renamed By Matrix' }),
    status: 200,
    allowed: SUPER,
    written: async (t, { f }) => expect((await adminRow(t, f.adminUuid)).fullName).toBe('Renamed By Matrix'),
  },
];

/** Admin-area routes open to anyone (auth.md: login; endpoints.md: forgot / reset password). */
const PUBLIC_ADMIN_ROUTES = [
  'POST /api/v1/admins/login',
  'POST /api/v1/admins/forgot-password',
  'POST /api/v1/admins/reset-password',
];

async function createFixtures(t: TestApp): Promise<Fixtures> {
  const target = await createAdmin(t, 'admin');
  return { adminUuid: target.uuid };
}

/** Everything a refused request must leave as it was (areas with their own tables add them here). */
async function snapshot(t: TestApp): Promise<unknown> {
  return t.dataSource
    .getRepository(Admin)
    .createQueryBuilder('admin')
    .addSelect('admin.passwordHash')
    .orderBy('admin.id')
    .getMany();
}

const key = (e: MatrixEntry) => `${e.method.toUpperCase()} ${e.route}`;

describe('Admin role matrix (auth.md)', () => {
  let t: TestApp;
  let fixtures: Fixtures;
  const callers = {} as Record<AdminRoleName, CreatedAdmin>;
  let userToken: string;

  beforeAll(async () => {
    t = await createTestApp();
    for (const role of ADMIN_ROLE_NAMES) callers[role] = await createAdmin(t, role);
    fixtures = await createFixtures(t);
    userToken = (await createActiveUser(t)).accessToken;
  });
  afterAll(async () => {
    await t.close();
  });

  function call(entry: MatrixEntry, token?: string) {
    let req = t.http()[entry.method](entry.path(fixtures));
    if (token) req = req.set(...bearer(token));
    return entry.body ? req.send(entry.body(fixtures)) : req;
  }

  const cells = MATRIX.flatMap((entry) =>
    ADMIN_ROLE_NAMES.map((role) => ({ entry, role, allowed: entry.allowed.includes(role) })),
  );

  it.each(
    cells.map((c) => [c.entry.row, key(c.entry), c.role, c.allowed ? 'allowed' : 'refused', c] as const),
  )('%s: %s as %s is %s', async (_row, _key, role, _verdict, { entry, allowed }) => {
    const before = await snapshot(t);
    const res = await call(entry, callers[role].accessToken);
    if (allowed) {
      expect(res.status).toBe(entry.status);
      expect(res.body).toMatchObject({ status: 'success', code: entry.status });
      expect(typeof res.body.data).toBe('object');
      expect(res.body.data).not.toBeNull();
      await entry.written?.(t, { f: fixtures, caller: callers[role], data: res.body.data });
    } else {
      expect(res.status).toBe(403);
      expectFailure(res.body, 403, 'Your role does not allow this');
      expect(await snapshot(t)).toEqual(before);
    }
  });

  it.each(MATRIX.map((e) => [key(e), e] as const))(
    '%s with a user access token is 403',
    async (_key, entry) => {
      const before = await snapshot(t);
      const res = await call(entry, userToken);
      expect(res.status).toBe(403);
      expectFailure(res.body, 403, 'This route is for admins only');
      expect(await snapshot(t)).toEqual(before);
    },
  );

  it.each(MATRIX.map((e) => [key(e), e] as const))('%s without a token is 401', async (_key, entry) => {
    const before = await snapshot(t);
    const res = await call(entry);
    expect(res.status).toBe(401);
    expectFailure(res.body, 401, 'Missing bearer token');
    expect(await snapshot(t)).toEqual(before);
  });

  it('covers every admin route of the router, and names no route that does not exist', () => {
    const registered = new Set(
      t.routes
        .filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS' && r.url.startsWith('/api/v1/admins'))
        .map((r) => `${r.method} ${r.url}`),
    );
    const inMatrix = new Set(MATRIX.map(key));
    expect(
      [...registered].filter((r) => !inMatrix.has(r) && !PUBLIC_ADMIN_ROUTES.includes(r)).sort(),
    ).toEqual([]);
    expect([...inMatrix].filter((r) => !registered.has(r)).sort()).toEqual([]);
    expect(PUBLIC_ADMIN_ROUTES.filter((r) => !registered.has(r))).toEqual([]);
  });
});
