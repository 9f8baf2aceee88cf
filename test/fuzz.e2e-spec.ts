import fc from 'fast-check';
import type { Response } from 'supertest';
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
  // Configured (so the CRM routes get past "not configured") but never connected: nothing listens there.
  CRM_CLIENT_ID: 'fuzz-crm-client',
  CRM_CLIENT_SECRET: 'fuzz-crm-secret',
  CRM_ACCOUNTS_URL: 'http://127.0.0.1:9',
};
const RUNS_PER_ROUTE = 12;
/** Tables that none of these requests can legitimately change. */
const UNTOUCHED_TABLES = ['admin_roles', 'admins', 'users', 'refresh_token_blacklist', 'crm_connections'];

interface Schema {
  $ref?: string;
  type?: string;
  nullable?: boolean;
  properties?: Record<string, Schema>;
  allOf?: Schema[];
}

interface Operation {
  method: string;
  path: string;
  /** The JSON body's schema, with $refs resolved, when the operation takes one. */
  body?: Schema;
  /** Webhooks keep the sender's raw fields: they are not validated against the schema. */
  rawPayload: boolean;
}

/** 90,000 unknown keys in just under 1 MB (README.md "Bodies"). */
const MANY_KEYS_BODY = `{${Array.from({ length: 90_000 }, (_, i) => `"k${i.toString(36)}":1`).join(',')}}`;

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
  let resolve: (schema: Schema) => Schema;
  let userToken: string;
  let adminToken: string;

  beforeAll(async () => {
    t = await createTestApp({ env: MACHINE_SECRETS });
    userToken = (await createActiveUser(t)).accessToken;
    adminToken = (await createAdmin(t, 'superAdmin')).accessToken;
    const doc = (await t.http().get('/api-docs-json').expect(200)).body as {
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: Schema }> }; security?: object[] }>
      >;
      components: { schemas: Record<string, Schema> };
    };
    resolve = (schema: Schema): Schema => {
      if (schema.$ref) return resolve(doc.components.schemas[schema.$ref.split('/').pop()!]);
      if (schema.allOf) return schema.allOf.map(resolve).reduce((a, b) => ({ ...a, ...b }), {});
      return schema;
    };
    operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => {
        const json = op.requestBody?.content['application/json']?.schema;
        // Webhooks and the log shipper send what their sender writes: extra and null fields are theirs.
        const rawPayload =
          (op.security ?? []).some((s) => 'callback-token' in s || 'basic' in s) ||
          path === '/api/v1/callback-raw-log';
        return { method, path, body: json ? resolve(json) : undefined, rawPayload };
      }),
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

  function expectEnvelope(where: string, res: Response) {
    expect([where, res.status < 500]).toEqual([where, true]);
    expect([where, String(res.headers['content-type'])]).toEqual([
      where,
      expect.stringMatching(/^application\/json/),
    ]);
    expect([where, res.body.code, typeof res.body.msg]).toEqual([where, res.status, 'string']);
  }

  const jsonRoutes = () => operations.filter((op) => op.body);
  const withParams = (path: string) => path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');

  it('sends null for each field of every JSON body: never a 500, and refused (4xx) unless the field is nullable', async () => {
    const before: Record<string, number> = {};
    for (const table of UNTOUCHED_TABLES) before[table] = await countRows(t, table);
    let sent = 0;
    for (const op of jsonRoutes()) {
      for (const [field, schema] of Object.entries(op.body!.properties ?? {})) {
        const res = await t
          .http()
          [op.method as 'post'](withParams(op.path))
          .set(credentialsFor(op.path))
          .send({ [field]: null });
        sent++;
        const where = `${op.method.toUpperCase()} ${op.path} {"${field}":null}`;
        expectEnvelope(where, res);
        if (op.rawPayload || resolve(schema).nullable) continue;
        expect([where, res.status >= 400]).toEqual([where, true]);
        if (res.status === 400 && res.body.error.details) {
          const fields = (res.body.error.details as Array<{ field: string }>).map((d) => d.field);
          expect([where, fields]).toEqual([where, expect.arrayContaining([field])]);
        }
      }
    }
    expect(sent).toBeGreaterThanOrEqual(40);
    for (const table of UNTOUCHED_TABLES)
      expect([table, await countRows(t, table)]).toEqual([table, before[table]]);
  }, 120_000);

  it('takes JSON with a charset parameter or in any case on every JSON body route (never a 415)', async () => {
    for (const op of jsonRoutes()) {
      for (const type of ['application/json; charset=utf-8', 'Application/JSON;Charset=UTF-8']) {
        const res = await t
          .http()
          [op.method as 'post'](withParams(op.path))
          .set(credentialsFor(op.path))
          .set('content-type', type)
          .send('{}');
        const where = `${op.method.toUpperCase()} ${op.path} as ${type}`;
        expectEnvelope(where, res);
        expect([where, res.status]).not.toEqual([where, 415]);
      }
    }
  }, 120_000);

  it('refuses a 1 MB body of 90,000 unknown keys on every JSON body route with a small answer', async () => {
    for (const op of jsonRoutes()) {
      const res = await t
        .http()
        [op.method as 'post'](withParams(op.path))
        .set(credentialsFor(op.path))
        .set('content-type', 'application/json')
        .send(MANY_KEYS_BODY);
      const where = `${op.method.toUpperCase()} ${op.path}`;
      expectEnvelope(where, res);
      expect([where, JSON.stringify(res.body).length < 10_000]).toEqual([where, true]);
      if (!op.rawPayload) expect([where, res.status >= 400]).toEqual([where, true]);
      if (res.body.error?.details) expect(res.body.error.details.length).toBeLessThanOrEqual(20);
    }
  }, 120_000);

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
