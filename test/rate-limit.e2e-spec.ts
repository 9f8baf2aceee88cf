import { Controller, Get, Module } from '@nestjs/common';
import Redis from 'ioredis';
import { createServer } from 'node:net';
import type { Response } from 'supertest';
import { ResponseMessage } from '../src/common/http/response-message.decorator';
import { UseCredential } from '../src/modules/auth/access.decorators';
import {
  bearer,
  createActiveUser,
  createAdmin,
  expectFailure,
  PASSWORD,
  registerUser,
  uniqueEmail,
} from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const TOO_MANY = 'Too many requests, try again later';
const INTERNAL_API_KEY = 'rate-limit-spec-internal-key-0123456789';
const REDIS_URL = 'redis://127.0.0.1:6379';

/** A machine-credential route, mounted by this spec only: such routes are not counted per IP. */
@Controller('test/rate-limit')
class MachineProbeController {
  @Get('machine')
  @UseCredential('api-key')
  @ResponseMessage('Machine probe')
  probe(): { probed: true } {
    return { probed: true };
  }
}

@Module({ controllers: [MachineProbeController] })
class MachineProbeModule {}

/** A 429 of the spec: the failure envelope and `retry-after` in whole seconds within the window. */
function expectTooMany(res: Response, windowSeconds: number): void {
  expect(res.status).toBe(429);
  expectFailure(res.body, 429, TOO_MANY);
  expect(res.headers['retry-after']).toMatch(/^\d+$/);
  const seconds = Number(res.headers['retry-after']);
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(windowSeconds);
}

function expectSuccess(res: Response, status: number, data: unknown): void {
  expect(res.status).toBe(status);
  expect(res.body).toMatchObject({ status: 'success', code: status, data });
  expect(res.headers['retry-after']).toBeUndefined();
}

/** A local port where nothing listens. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('Rate limits (quality.md, security)', () => {
  describe('the Redis store (REDIS_URL)', () => {
    let redis: Redis;

    beforeAll(() => {
      redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    });
    afterAll(async () => {
      await redis.quit();
    });

    // First in the file: closing a client that never reached Redis leaves ioredis a 2 s socket
    // timer (harmless, but Jest would wait for it at the end).
    it('counts in the process when Redis cannot be reached (never fails open, never a 500)', async () => {
      const t = await createTestApp({
        env: {
          REDIS_URL: `redis://127.0.0.1:${await closedPort()}`,
          LOGIN_RATE_LIMIT_PER_MINUTE: '1',
          RATE_LIMIT_PER_MINUTE: '100000',
        },
      });
      try {
        // A login limit of 1, counted by this process: the second login of the user is refused.
        const user = await createActiveUser(t);
        const again = await t
          .http()
          .post('/api/v1/users/login')
          .send({ email: user.email, password: PASSWORD });
        expectTooMany(again, 60);
        const me = await t
          .http()
          .get('/api/v1/users/me')
          .set(...bearer(user.accessToken));
        expectSuccess(me, 200, { user: { email: user.email } });
      } finally {
        await t.close();
      }
    });

    it('shares the login counter between two replicas', async () => {
      const env = { REDIS_URL, LOGIN_RATE_LIMIT_PER_MINUTE: '10', RATE_LIMIT_PER_MINUTE: '100000' };
      const a = await createTestApp({ env, smtp: false });
      const b = await createTestApp({ env, smtp: false });
      const email = uniqueEmail('redis');
      try {
        const attempt = (app: TestApp) =>
          app.http().post('/api/v1/users/login').send({ email, password: 'not the password' });
        for (let i = 0; i < 6; i++)
          expectFailure((await attempt(a).expect(401)).body, 401, 'Invalid email or password');
        for (let i = 0; i < 4; i++)
          expectFailure((await attempt(b).expect(401)).body, 401, 'Invalid email or password');
        // The 11th attempt, the 5th on replica B: B has seen only 5, the shared counter 11.
        expectTooMany(await attempt(b), 60);
        expectTooMany(await attempt(a), 60);

        // The counter lives in Redis, with the one-minute window as its expiry.
        const keys = await redis.keys(`rl:login:*:${email}`);
        expect(keys).toHaveLength(1);
        expect(await redis.get(keys[0])).toBe('12');
        const ttl = await redis.pttl(keys[0]);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(60_000);
        await redis.del(keys[0]);
      } finally {
        await a.close();
        await b.close();
      }
    });
  });

  describe('login and e-mail limits', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await createTestApp({
        env: {
          LOGIN_RATE_LIMIT_PER_MINUTE: '10',
          EMAIL_RATE_LIMIT_PER_HOUR: '5',
          RATE_LIMIT_PER_MINUTE: '100000',
        },
      });
    });
    afterAll(async () => {
      await t.close();
    });

    const login = (email: string, password = PASSWORD) =>
      t.http().post('/api/v1/users/login').send({ email, password });

    it('login: the 11th attempt in a minute for one IP and e-mail is refused, failed and successful alike', async () => {
      const user = await createActiveUser(t); // attempt 1 (200)
      const other = await createActiveUser(t);
      for (let attempt = 2; attempt <= 10; attempt++) {
        if (attempt % 2 === 0) {
          expectFailure(
            (await login(user.email, 'not the password').expect(401)).body,
            401,
            'Invalid email or password',
          );
        } else {
          // The limiter keys on the normalised e-mail, as login itself does.
          const email = attempt === 3 ? ` ${user.email.toUpperCase()}` : user.email;
          expectSuccess(await login(email), 200, { tokenType: 'Bearer', user: { email: user.email } });
        }
      }

      // 11th: refused before the password is even checked, right or wrong.
      expectTooMany(await login(user.email), 60);
      expectTooMany(await login(user.email, 'not the password'), 60);
      expectTooMany(await login(user.email.toUpperCase()), 60);

      // Another e-mail from the same IP is still allowed, and the user's access token still works.
      expectSuccess(await login(other.email), 200, { tokenType: 'Bearer', user: { email: other.email } });
      const me = await t
        .http()
        .get('/api/v1/users/me')
        .set(...bearer(user.accessToken));
      expectSuccess(me, 200, { user: { email: user.email, status: 'active' } });
    });

    it('admin login has the same per-IP-and-e-mail limit', async () => {
      const admin = await createAdmin(t, 'admin'); // attempt 1 (200)
      const adminLogin = (password: string) =>
        t.http().post('/api/v1/admins/login').send({ email: admin.email, password });
      for (let attempt = 2; attempt <= 10; attempt++) {
        expectFailure(
          (await adminLogin('not the password').expect(401)).body,
          401,
          'Invalid email or password',
        );
      }
      expectTooMany(await adminLogin(PASSWORD), 60);
    });

    it('forgot-password: the 6th request per e-mail in an hour is refused, and sends nothing', async () => {
      const user = await registerUser(t);
      const forgot = (email: string) => t.http().post('/api/v1/users/forgot-password').send({ email });
      for (let i = 1; i <= 5; i++)
        expectSuccess(await forgot(i === 2 ? user.email.toUpperCase() : user.email), 200, {});
      await t.smtp.waitFor(user.email, /reset/i, 5);

      expectTooMany(await forgot(user.email), 3600);
      // Unknown and other addresses are counted on their own.
      expectSuccess(await forgot(uniqueEmail('ghost')), 200, {});
      await t.settle();
      expect(t.smtp.count(user.email, /reset/i)).toBe(5);
    });

    it('resend-verification: the 6th request per e-mail in an hour is refused, and sends nothing', async () => {
      const user = await registerUser(t);
      const other = await registerUser(t);
      await t.smtp.waitFor(user.email, /verify/i);
      const resend = (email: string) => t.http().post('/api/v1/users/resend-verification').send({ email });
      for (let i = 1; i <= 5; i++) expectSuccess(await resend(user.email), 200, {});
      await t.smtp.waitFor(user.email, /verify/i, 6); // the registration mail and five more

      expectTooMany(await resend(user.email), 3600);
      expectSuccess(await resend(other.email), 200, {});
      await t.smtp.waitFor(other.email, /verify/i, 2);
      expect(t.smtp.count(user.email, /verify/i)).toBe(6);
    });
  });

  describe('the general per-IP limit', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await createTestApp({
        env: { RATE_LIMIT_PER_MINUTE: '30', INTERNAL_API_KEY },
        imports: [MachineProbeModule],
        smtp: false,
      });
    });
    afterAll(async () => {
      await t.close();
    });

    const live = () => t.http().get('/health/live');
    const machine = () => t.http().get('/test/rate-limit/machine').set('x-api-key', INTERNAL_API_KEY);

    it('counts user, admin and public routes per IP, but neither health probes nor machine credentials', async () => {
      // Not counted: 40 liveness probes and 40 machine calls, more than the limit of 30.
      for (let i = 0; i < 40; i++) expectSuccess(await live(), 200, { status: 'ok' });
      for (let i = 0; i < 40; i++) expectSuccess(await machine(), 200, { probed: true });

      // Counted: 30 requests, refused or not, across user, admin and public routes.
      for (let i = 0; i < 10; i++) {
        expectFailure((await t.http().get('/api/v1/users/me').expect(401)).body, 401, 'Missing bearer token');
        expectFailure(
          (await t.http().get('/api/v1/admins/me').expect(401)).body,
          401,
          'Missing bearer token',
        );
        const verify = await t
          .http()
          .post('/api/v1/users/verify-email')
          .send({ token: 'not-a-token' })
          .expect(401);
        expectFailure(verify.body, 401, 'Invalid or expired token');
      }

      // The 31st and later, whatever the route: 429, public login included.
      expectTooMany(
        await t.http().post('/api/v1/users/login').send({ email: uniqueEmail(), password: PASSWORD }),
        60,
      );
      expectTooMany(
        await t.http().post('/api/v1/admins/login').send({ email: uniqueEmail(), password: PASSWORD }),
        60,
      );
      expectTooMany(await t.http().get('/api/v1/users/me'), 60);
      expectTooMany(
        await t
          .http()
          .post('/api/v1/users/register')
          .send({ companyName: 'Acme', fullName: 'Ada', email: uniqueEmail(), password: PASSWORD }),
        60,
      );
      // Nothing behind the refusals ran: the registration wrote no user.
      const [{ n }] = await t.dataSource.query('SELECT COUNT(*) AS n FROM users');
      expect(Number(n)).toBe(0);

      // Still answered.
      expectSuccess(await live(), 200, { status: 'ok' });
      expectSuccess(await t.http().get('/health'), 200, { status: 'ok', checks: { database: 'up' } });
      expectSuccess(await machine(), 200, { probed: true });
    });
  });
});
