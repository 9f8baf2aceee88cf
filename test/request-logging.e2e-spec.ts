import pino, { Logger } from 'pino';
import { ROOT_LOGGER } from '../src/common/logging/logger.options';
import { Logger as NestLogger } from '@nestjs/common';
import { bearer, createActiveUser } from './support/factories';
import { TestControllersModule } from './support/test-controllers';
import { createTestApp, TestApp } from './support/test-app';

/**
 * The request log (quality.md "Security"): the public script route is logged with its token
 * replaced, what the request line says otherwise (method, path without query, status).
 */
describe('Request logging', () => {
  let t: TestApp;
  const lines: string[] = [];

  beforeAll(async () => {
    t = await createTestApp({
      env: { LOG_LEVEL: 'info', PUBLIC_URL: 'https://relay.example.test' },
      imports: [TestControllersModule],
    });
    // Everything the root logger writes from now on (its destination stream), in memory.
    const root = t.app.get<Logger>(ROOT_LOGGER) as unknown as Record<symbol, unknown>;
    root[pino.symbols.streamSym] = { write: (line: string) => void lines.push(line) };
  });
  afterAll(async () => {
    await t.close();
  });

  it('logs the script route with its token replaced, for a real token, an unknown one and any query', async () => {
    const owner = await createActiveUser(t);
    await t
      .http()
      .put('/api/v1/mailbox-suites')
      .set(...bearer(owner.accessToken))
      .send({ suite: 'google-workspace' })
      .expect(200);
    const made = await t
      .http()
      .post('/api/v1/mailbox-suites/script-token')
      .set(...bearer(owner.accessToken))
      .expect(200);
    const scriptUrl = new URL(made.body.data.scriptUrl as string);
    const token = scriptUrl.pathname.split('/').pop()!;
    expect(token.length).toBeGreaterThanOrEqual(20);
    const unknown = 'unknown-token-0123456789abcdefghij';
    lines.length = 0;

    await t.http().get(scriptUrl.pathname).expect(200);
    await t.http().get(`${scriptUrl.pathname}?suite=microsoft365`).expect(200);
    await t.http().get(`/public/company/script/${unknown}`).expect(404);

    const text = lines.join('');
    expect(text).not.toContain(token);
    expect(text).not.toContain(unknown);
    const completed = lines
      .map((l) => JSON.parse(l) as { msg: string; req?: { method: string; path: string }; res?: object })
      .filter((l) => l.msg === 'request completed');
    expect(completed.map((l) => [l.req, l.res])).toEqual([
      [{ method: 'GET', path: '/public/company/script/[REDACTED]' }, { statusCode: 200 }],
      [{ method: 'GET', path: '/public/company/script/[REDACTED]' }, { statusCode: 200 }],
      [{ method: 'GET', path: '/public/company/script/[REDACTED]' }, { statusCode: 404 }],
    ]);
  });

  it('logs other paths as they are, without their query string', async () => {
    lines.length = 0;
    await t.http().get('/api/v1/domains?page=1&secret=abc').expect(401);
    const text = lines.join('');
    expect(text).toContain('"path":"/api/v1/domains"');
    expect(text).not.toContain('secret=abc');
  });

  it("puts the request's id on every line written while it is handled, and on no line outside a request", async () => {
    lines.length = 0;
    await t.http().get('/test/errors/crash').set('x-request-id', 'req-logging-1').expect(500);
    await t.http().get('/test/errors/crash').expect(500);
    new NestLogger('Outside').warn('written outside any request');

    const logged = lines.map((l) => JSON.parse(l) as { level: number; msg: string; reqId?: string });
    const errors = logged.filter((l) => l.level === 50);
    expect(errors).toHaveLength(2);
    expect(errors[0].reqId).toBe('req-logging-1');
    expect(errors[1].reqId).toMatch(/^[0-9a-f-]{36}$/);
    const completed = logged.filter((l) => l.msg === 'request completed').map((l) => l.reqId);
    expect(completed).toEqual(['req-logging-1', errors[1].reqId]);
    const outside = logged.find((l) => l.msg === 'written outside any request');
    expect(outside).toBeDefined();
    expect(outside).not.toHaveProperty('reqId');
  });
});
