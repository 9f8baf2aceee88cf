import { APP_URL, createTestApp, TestApp } from './support/test-app';
import { bearer, countRows, createAdmin, expectFailure, PASSWORD } from './support/factories';
import { LEAKY_ERROR_TEXT, TestControllersModule } from './support/test-controllers';

/**
 * README "Envelope" and quality.md "Security": what every response looks like, whatever the
 * route or the failure, and the headers that come with it.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const INTERNAL_ERROR = {
  status: 'failed',
  code: 500,
  msg: 'Internal server error',
  data: null,
  error: { msg: 'Internal server error' },
};

describe('Envelope, errors and headers', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ imports: [TestControllersModule] });
  });
  afterAll(async () => {
    await t.close();
  });

  describe('unknown routes', () => {
    it.each([
      ['get', '/no/such/route'],
      ['post', '/api/v1/no-such-route'],
      ['delete', '/api/v1/users/me'],
      ['get', '/api/v2/users/me'],
    ] as const)('%s %s → 404 "Route does not exist"', async (method, path) => {
      const res = await t.http()[method](path).expect(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({
        status: 'failed',
        code: 404,
        msg: 'Route does not exist',
        data: null,
        error: { msg: 'Route does not exist' },
      });
    });
  });

  describe('x-request-id', () => {
    it('echoes the id the caller sent, on success and on errors', async () => {
      const ok = await t.http().get('/health/live').set('x-request-id', 'caller-id-123').expect(200);
      expect(ok.headers['x-request-id']).toBe('caller-id-123');
      expect(ok.body).toEqual({
        status: 'success',
        code: 200,
        msg: 'Service is alive',
        data: { status: 'ok' },
      });

      const notFound = await t.http().get('/nope').set('x-request-id', 'caller-id-404').expect(404);
      expect(notFound.headers['x-request-id']).toBe('caller-id-404');
      expectFailure(notFound.body, 404, 'Route does not exist');

      const unauthorized = await t
        .http()
        .get('/api/v1/users/me')
        .set('x-request-id', 'caller-id-401')
        .expect(401);
      expect(unauthorized.headers['x-request-id']).toBe('caller-id-401');
      expectFailure(unauthorized.body, 401, 'Missing bearer token');

      const crashed = await t
        .http()
        .get('/test/errors/crash')
        .set('x-request-id', 'caller-id-500')
        .expect(500);
      expect(crashed.headers['x-request-id']).toBe('caller-id-500');
      expect(crashed.body).toEqual(INTERNAL_ERROR);
    });

    it('generates a UUID when none is sent, a new one per request, also on errors', async () => {
      const a = await t.http().get('/health/live').expect(200);
      const b = await t.http().get('/health/live').expect(200);
      expect(a.headers['x-request-id']).toMatch(UUID);
      expect(b.headers['x-request-id']).toMatch(UUID);
      expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
      expect(a.body.data).toEqual({ status: 'ok' });

      const malformed = await t
        .http()
        .post('/api/v1/users/login')
        .set('content-type', 'application/json')
        .send('{"email":')
        .expect(400);
      expect(malformed.headers['x-request-id']).toMatch(UUID);
      expectFailure(malformed.body, 400, 'Malformed JSON in request body');

      const crashed = await t.http().get('/test/errors/crash').expect(500);
      expect(crashed.headers['x-request-id']).toMatch(UUID);
      expect(crashed.body).toEqual(INTERNAL_ERROR);
    });

    it('replaces an id that is not a sane token with a generated one', async () => {
      const res = await t
        .http()
        .get('/health/live')
        .set('x-request-id', `bad id ${'x'.repeat(200)}`)
        .expect(200);
      expect(res.headers['x-request-id']).toMatch(UUID);
      expect(res.body.data).toEqual({ status: 'ok' });
    });
  });

  describe('500 and database errors', () => {
    it('answers a plain Error with exactly the 500 envelope: no message, stack or SQL', async () => {
      const res = await t.http().get('/test/errors/crash').expect(500);
      expect(res.body).toEqual(INTERNAL_ERROR);
      expect(res.text).not.toContain('hunter2');
      expect(res.text).not.toContain(LEAKY_ERROR_TEXT);
      expect(res.text).not.toMatch(/SELECT|stack|\.ts:\d+/i);
    });

    it('answers a failed query with the 500 envelope, without the SQL or the driver message', async () => {
      const res = await t.http().get('/test/errors/bad-sql').expect(500);
      expect(res.body).toEqual(INTERNAL_ERROR);
      expect(res.text).not.toMatch(/no_such_table|secret_column|SELECT|relation/i);
    });

    it('turns a real unique-constraint violation into 409, in one place, and keeps nothing', async () => {
      const before = await countRows(t, 'admin_roles');
      const res = await t.http().post('/test/errors/unique-violation').expect(409);
      expect(res.body).toEqual({
        status: 'failed',
        code: 409,
        msg: 'Resource already exists',
        data: null,
        error: { msg: 'Resource already exists' },
      });
      expect(res.text).not.toMatch(/admin_roles|UNIQUE|duplicate|INSERT/i);
      expect(await countRows(t, 'admin_roles')).toBe(before);
    });
  });

  describe('security headers', () => {
    it('sends the helmet headers and no x-powered-by, on success and on errors', async () => {
      for (const [path, status] of [
        ['/health', 200],
        ['/no/such/route', 404],
        ['/api/v1/admins/me', 401],
      ] as const) {
        const res = await t.http().get(path).expect(status);
        expect(res.body).toMatchObject({ code: status, status: status === 200 ? 'success' : 'failed' });
        expect(res.body).toHaveProperty('data');
        expect(res.headers).toMatchObject({
          'x-content-type-options': 'nosniff',
          'x-frame-options': 'SAMEORIGIN',
          'x-dns-prefetch-control': 'off',
          'referrer-policy': 'no-referrer',
          'cross-origin-opener-policy': 'same-origin',
        });
        expect(res.headers['strict-transport-security']).toMatch(/max-age=\d+/);
        expect(res.headers['content-security-policy']).toContain("default-src 'self'");
        expect(res.headers).not.toHaveProperty('x-powered-by');
      }
    });
  });

  describe('CORS', () => {
    it('allows the configured origin (APP_URL) and exposes x-request-id', async () => {
      const res = await t.http().get('/health/live').set('origin', APP_URL).expect(200);
      expect(res.headers['access-control-allow-origin']).toBe(APP_URL);
      expect(res.headers['access-control-allow-credentials']).toBe('true');
      expect(res.headers['access-control-expose-headers']).toContain('x-request-id');
      expect(res.body.data).toEqual({ status: 'ok' });
    });

    it('answers a preflight from the configured origin', async () => {
      const res = await t
        .http()
        .options('/api/v1/users/login')
        .set('origin', APP_URL)
        .set('access-control-request-method', 'POST')
        .set('access-control-request-headers', 'content-type,authorization');
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe(APP_URL);
      expect(res.headers['access-control-allow-methods']).toContain('POST');
      // A preflight is answered by CORS itself: no body, so no envelope.
      expect(res.text).toBe('');
    });

    it('does not allow any other origin', async () => {
      const res = await t.http().get('/health/live').set('origin', 'http://evil.test').expect(200);
      expect(res.headers).not.toHaveProperty('access-control-allow-origin');
      expect(res.body.data).toEqual({ status: 'ok' });

      const preflight = await t
        .http()
        .options('/api/v1/users/login')
        .set('origin', 'http://evil.test')
        .set('access-control-request-method', 'POST');
      expect(preflight.headers).not.toHaveProperty('access-control-allow-origin');
    });
  });

  describe('bodies the parser refuses', () => {
    it('refuses a JSON body over 1 MB with the 413 envelope, and writes nothing', async () => {
      const before = await countRows(t, 'users');
      const res = await t
        .http()
        .post('/api/v1/users/register')
        .set('content-type', 'application/json')
        .send(
          JSON.stringify({
            companyName: 'x'.repeat(1024 * 1024),
            fullName: 'Big Body',
            email: 'big@example.com',
            password: PASSWORD,
          }),
        )
        .expect(413);
      expectFailure(res.body, 413, 'Request body is too large');
      expect(await countRows(t, 'users')).toBe(before);
    });

    it('refuses a content type the route does not take with the 415 envelope', async () => {
      for (const type of ['application/xml', 'application/x-www-form-urlencoded', 'image/png']) {
        const res = await t
          .http()
          .post('/api/v1/users/login')
          .set('content-type', type)
          .send('email=a')
          .expect(415);
        expectFailure(res.body, 415);
        expect(res.body.msg).toMatch(/unsupported/i);
      }
    });
  });

  describe('/health', () => {
    it('GET /health: 200 with the database, index and mail checks', async () => {
      const res = await t.http().get('/health').expect(200);
      expect(res.body).toEqual({
        status: 'success',
        code: 200,
        msg: 'Service is healthy',
        data: { status: 'ok', checks: { database: 'up', index: 'sql', mail: 'smtp' } },
      });
    });

    it('GET /health/live: 200 { status: ok }', async () => {
      const res = await t.http().get('/health/live').expect(200);
      expect(res.body).toEqual({
        status: 'success',
        code: 200,
        msg: 'Service is alive',
        data: { status: 'ok' },
      });
    });
  });
});

describe('Database down', () => {
  let t: TestApp;
  let adminToken: string;

  beforeAll(async () => {
    t = await createTestApp({ smtp: false });
    adminToken = (await createAdmin(t, 'superAdmin')).accessToken;
    await t.dataSource.destroy();
  });
  afterAll(async () => {
    await t.close();
  });

  it('GET /health answers 503 with the envelope', async () => {
    const res = await t.http().get('/health').expect(503);
    expect(res.body).toEqual({
      status: 'failed',
      code: 503,
      msg: 'Database is down',
      data: null,
      error: { msg: 'Database is down' },
    });
  });

  it('a route that queries the database answers 503 "Service unavailable", not 500', async () => {
    const res = await t
      .http()
      .post('/api/v1/users/login')
      .send({ email: 'someone@example.com', password: PASSWORD })
      .expect(503);
    expect(res.body).toEqual({
      status: 'failed',
      code: 503,
      msg: 'Service unavailable',
      data: null,
      error: { msg: 'Service unavailable' },
    });
  });

  it('a bearer route (the guard reads the admin from the database) answers 503 too', async () => {
    const res = await t
      .http()
      .get('/api/v1/admins/me')
      .set(...bearer(adminToken))
      .expect(503);
    expectFailure(res.body, 503, 'Service unavailable');
  });

  it('liveness does no I/O and stays 200', async () => {
    const res = await t.http().get('/health/live').expect(200);
    expect(res.body).toEqual({
      status: 'success',
      code: 200,
      msg: 'Service is alive',
      data: { status: 'ok' },
    });
  });
});
