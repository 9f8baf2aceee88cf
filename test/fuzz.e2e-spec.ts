import fc from 'fast-check';
import { bearer, countRows, createActiveUser, createAdmin } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

/**
 * quality.md "Bad input": generated junk posted to every route of the OpenAPI document gets a
 * 4xx (or a success) in the envelope, never a 500, and tables no such request may write stay
 * as they were. Credentials are valid, so the junk reaches the validation and the handlers.
 */
const MACHINE_SECRETS = {
  INTERNAL_API_KEY: 'fuzz-internal-api-key-0123456789',
  LOG_SHIPPER_API_KEY: 'fuzz-log-shipper-key-0123456789',
  PAYMENT_CALLBACK_TOKEN: 'fuzz-callback-token-0123456789',
  MAIL_PROVIDER_WEBHOOK_USER: 'provider',
  MAIL_PROVIDER_WEBHOOK_PASSWORD: 'fuzz-provider-password',
};
const RUNS_PER_ROUTE = 12;
/** Tables that none of these requests can legitimately change. */
const UNTOUCHED_TABLES = ['admin_roles', 'admins', 'users', 'refresh_token_blacklist'];

interface Operation {
  method: string;
  path: string;
}

const junkValue = fc.oneof(
  fc.anything(),
  fc.string({ maxLength: 300 }),
  fc.integer(),
  fc.double(),
  fc.constant(null),
  fc.constant('\u0000'),
  fc.constant('__proto__'),
);
const junkBody = fc.oneof(
  fc.dictionary(fc.string({ maxLength: 20 }), junkValue, { maxKeys: 6 }),
  fc.array(junkValue, { maxLength: 4 }),
  junkValue,
);
const junkParam = fc.oneof(
  fc.uuid(),
  fc.string({ minLength: 1, maxLength: 40 }),
  fc.constant('00000000-0000-0000-0000-000000000000'),
);
const junkQuery = fc.dictionary(
  fc.constantFrom(
    'page',
    'limit',
    'sort',
    'search',
    'status',
    'from',
    'to',
    'isActive',
    'unread',
    'type',
    'job',
    'companyUuid',
  ),
  fc.string({ maxLength: 30 }),
  { maxKeys: 4 },
);

describe('Fuzz: generated junk on every route of the OpenAPI document', () => {
  let t: TestApp;
  let operations: Operation[];
  let userToken: string;
  let adminToken: string;

  beforeAll(async () => {
    t = await createTestApp({ env: MACHINE_SECRETS });
    userToken = (await createActiveUser(t)).accessToken;
    adminToken = (await createAdmin(t, 'superAdmin')).accessToken;
    const doc = (await t.http().get('/api-docs-json').expect(200)).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => ({ method, path })),
    );
  });
  afterAll(async () => {
    await t.close();
  });

  function credentialsFor(path: string): Record<string, string> {
    const headers: Record<string, string> = {
      'x-api-key': path.includes('callback-raw-log')
        ? MACHINE_SECRETS.LOG_SHIPPER_API_KEY
        : MACHINE_SECRETS.INTERNAL_API_KEY,
      'x-callback-token': MACHINE_SECRETS.PAYMENT_CALLBACK_TOKEN,
    };
    if (path.startsWith('/callback/')) {
      headers.authorization = `Basic ${Buffer.from(`provider:${MACHINE_SECRETS.MAIL_PROVIDER_WEBHOOK_PASSWORD}`).toString('base64')}`;
    } else {
      const [name, value] = bearer(
        path.startsWith('/api/v1/admins') || path.includes('t3st-job') ? adminToken : userToken,
      );
      headers[name] = value;
    }
    return headers;
  }

  it('covers the whole document', () => {
    expect(operations.length).toBeGreaterThanOrEqual(60);
  });

  it('never answers 500, always answers the envelope, and leaves untouched tables alone', async () => {
    const statuses = new Map<number, number>();
    const before: Record<string, number> = {};
    for (const table of UNTOUCHED_TABLES) before[table] = await countRows(t, table);

    for (const op of operations) {
      await fc.assert(
        fc.asyncProperty(junkParam, junkQuery, junkBody, async (param, query, body) => {
          const path = op.path.replace(/\{[^}]+\}/g, encodeURIComponent(param));
          let req = t.http()[op.method as 'get'](path).query(query).set(credentialsFor(op.path));
          if (op.method !== 'get' && op.method !== 'delete')
            req = req.set('content-type', 'application/json').send(JSON.stringify(body));
          const res = await req;
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          const where = `${op.method.toUpperCase()} ${path} ${JSON.stringify(body)?.slice(0, 200)}`;
          expect([where, res.status < 500]).toEqual([where, true]);
          if (String(res.headers['content-type']).startsWith('application/json')) {
            expect([where, res.body.code, typeof res.body.msg]).toEqual([where, res.status, 'string']);
            expect([where, res.body.status]).toEqual([where, res.status < 400 ? 'success' : 'failed']);
          }
        }),
        { numRuns: RUNS_PER_ROUTE, seed: 20261122 },
      );
    }

    for (const table of UNTOUCHED_TABLES)
      expect([table, await countRows(t, table)]).toEqual([table, before[table]]);
  }, 180_000);
});
