import { randomUUID } from 'node:crypto';
import { createTestApp, TestApp } from './support/test-app';
import { bearer, createAdmin } from './support/factories';
import { UndecoratedRouteModule } from './support/test-controllers';

/**
 * Closed by default (STYLE.md habit 2, auth.md "Guards"): walks every route the router holds
 * and proves that each refuses a request without credentials, unless this file lists it as
 * public. A new route that is neither public here nor protected makes this spec fail.
 */

/**
 * The routes endpoints.md marks public, with what each answers to a bare request (no
 * credential, no body): past the guard, so 200, or 400 from body validation. Adding a route
 * here is a decision, not a fix.
 */
const PUBLIC: Record<string, number> = {
  'POST /api/v1/users/register': 400,
  'POST /api/v1/users/accept-invite': 400,
  'POST /api/v1/users/login': 400,
  'POST /api/v1/users/verify-email': 400,
  'POST /api/v1/users/resend-verification': 400,
  'POST /api/v1/users/forgot-password': 400,
  'POST /api/v1/users/reset-password': 400,
  'POST /api/v1/admins/login': 400,
  'POST /api/v1/admins/forgot-password': 400,
  'POST /api/v1/admins/reset-password': 400,
  'GET /health': 200,
  'GET /health/live': 200,
  // The script token in the path is the credential (auth.md): a random one is a 404.
  'GET /public/company/script/:token': 404,
  // The CRM's OAuth redirect: the signed state is the credential, so without one, 400.
  'GET /api/v1/get-token': 400,
};

/** The refresh token is the credential and is read by the handler: without one, 400. */
const REFRESH_TOKEN = ['POST /api/v1/refresh', 'POST /api/v1/revoke'];

/** The one route of the test module that forgot its access decorator. */
const UNDECORATED = 'GET /test/undecorated';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

interface Answer {
  route: string;
  status: number;
  body: { status?: unknown; code?: unknown; msg?: unknown; data?: unknown; error?: { msg?: unknown } };
}

/** `METHOD /path` of every route, without Fastify's HEAD/OPTIONS twins and the Swagger UI. */
function walkableRoutes(t: TestApp): string[] {
  const routes = t.routes
    .filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS')
    .filter((r) => !/^\/api-docs(\/|-json$|-yaml$|$)/.test(r.url))
    .map((r) => `${r.method} ${r.url}`);
  return [...new Set(routes)].sort();
}

async function call(t: TestApp, route: string, headers: Record<string, string> = {}): Promise<Answer> {
  const [method, url] = route.split(' ');
  const path = url.replace(/:[A-Za-z0-9_]+/g, () => randomUUID());
  const res = await t.http()[method.toLowerCase() as Method](path).set(headers);
  return { route, status: res.status, body: res.body as Answer['body'] };
}

/** What a route without a usable credential must answer; undefined for public routes. */
function expectedRefusal(route: string): number | undefined {
  if (route in PUBLIC) return undefined;
  if (REFRESH_TOKEN.includes(route)) return 400;
  return 401;
}

function isFailureEnvelope(a: Answer): boolean {
  return (
    a.body.status === 'failed' &&
    a.body.code === a.status &&
    a.body.data === null &&
    typeof a.body.msg === 'string' &&
    a.body.error?.msg === a.body.msg
  );
}

describe('Route walker: every route is closed unless listed as public', () => {
  let t: TestApp;
  let routes: string[];

  beforeAll(async () => {
    // Machine secrets set, so machine-credential routes refuse with 401 rather than 503.
    t = await createTestApp({
      imports: [UndecoratedRouteModule],
      smtp: false,
      env: {
        INTERNAL_API_KEY: 'walker-internal-key-0123456789',
        LOG_SHIPPER_API_KEY: 'walker-log-shipper-key-0123456789',
        PAYMENT_CALLBACK_TOKEN: 'walker-callback-token-0123456789',
        MAIL_PROVIDER_WEBHOOK_USER: 'walker',
        MAIL_PROVIDER_WEBHOOK_PASSWORD: 'walker-password-0123456789',
        // Set, so /metrics asks for it; unset it would answer the walker's loopback requests.
        METRICS_TOKEN: 'walker-metrics-token-0123456789abcdef',
      },
    });
    routes = walkableRoutes(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('sees the whole router, including every route this file names', () => {
    expect(routes.length).toBeGreaterThanOrEqual(25);
    for (const route of [...Object.keys(PUBLIC), ...REFRESH_TOKEN, UNDECORATED])
      expect(routes).toContain(route);
    // Path parameters are walked too (they get a random UUID).
    expect(routes).toContain('GET /api/v1/admins/:uuid');
    expect(routes.every((r) => /^(GET|POST|PUT|PATCH|DELETE) \//.test(r))).toBe(true);
  });

  it('refuses every non-public route without credentials: 401 (400 for refresh/revoke), never 2xx/404/500', async () => {
    const guarded = routes.filter((r) => expectedRefusal(r) !== undefined);
    expect(guarded.length).toBeGreaterThanOrEqual(12);

    const answers = await Promise.all(guarded.map((r) => call(t, r)));
    for (const a of answers)
      expect({ route: a.route, envelope: isFailureEnvelope(a) }).toEqual({ route: a.route, envelope: true });

    const offenders = answers
      .filter((a) => a.status !== expectedRefusal(a.route))
      .map((a) => ({ route: a.route, status: a.status, msg: a.body.msg }));
    // The only offender is the test route that forgot its decorator: the walker catches it,
    // and the global guard has closed it (403) instead of letting the request through.
    expect(offenders).toEqual([{ route: UNDECORATED, status: 403, msg: 'Access denied' }]);

    const bearerRoutes = answers.filter(
      (a) => /^[A-Z]+ \/api\/v1\/(users|admins)\//.test(a.route) && a.status === 401,
    );
    expect(bearerRoutes.length).toBeGreaterThanOrEqual(8);
    for (const a of bearerRoutes) expect(a.body.msg).toBe('Missing bearer token');
  });

  it('refuses every non-public route with a malformed bearer token', async () => {
    const guarded = routes.filter((r) => expectedRefusal(r) !== undefined && r !== UNDECORATED);
    const answers = await Promise.all(guarded.map((r) => call(t, r, { authorization: 'Bearer not.a.jwt' })));
    const offenders = answers
      .filter((a) => a.status !== 401 || !isFailureEnvelope(a))
      .map((a) => ({ route: a.route, status: a.status, msg: a.body.msg }));
    expect(offenders).toEqual([]);
  });

  it('lets every public route through without credentials (200, 400 from validation past the guard, 404 for an unknown script token)', async () => {
    const answers = await Promise.all(Object.keys(PUBLIC).map((r) => call(t, r)));
    for (const a of answers) {
      expect([a.route, a.status]).toEqual([a.route, PUBLIC[a.route]]);
      expect(a.body).toMatchObject({ code: a.status, status: a.status < 400 ? 'success' : 'failed' });
      if (a.status === 400) {
        expect(isFailureEnvelope(a)).toBe(true);
        expect(a.body.msg).toBe('Validation failed');
      } else if (a.status === 404) {
        expect(isFailureEnvelope(a)).toBe(true);
        expect(a.body.msg).toBe('Script not found');
      } else {
        expect(a.body.data).toEqual(expect.objectContaining({ status: 'ok' }));
      }
    }
  });

  it('refuses the route without an access decorator even to a superAdmin', async () => {
    const admin = await createAdmin(t, 'superAdmin');
    const res = await t
      .http()
      .get('/test/undecorated')
      .set(...bearer(admin.accessToken))
      .expect(403);
    expect(res.body).toEqual({
      status: 'failed',
      code: 403,
      msg: 'Access denied',
      data: null,
      error: { msg: 'Access denied' },
    });
  });
});
