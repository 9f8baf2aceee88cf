import { createHash, randomUUID } from 'node:crypto';
import { ApiKey } from '../src/modules/api-keys/entities/api-key.entity';
import { ApiKeyEvents } from '../src/modules/auth/api-key-events';
import { newApiKey } from '../src/modules/auth/api-key-secret';
import { Company } from '../src/modules/companies/entities/company.entity';
import { Domain } from '../src/modules/domains/entities/domain.entity';
import {
  bearer,
  createActiveMember,
  createAdmin,
  createActiveUser,
  expectFailure,
  RegisteredUser,
  LoggedIn,
  storeDomain,
} from './support/factories';
import { createTestApp, freshDatabase, FreshDatabase, TestApp } from './support/test-app';

type Owner = RegisteredUser & LoggedIn;
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

const KEY_SHAPE = /^rk_[A-Za-z0-9_-]{43}$/;
const USER_ONLY = "This route needs a user's token";
const OUT_OF_SCOPE = 'API key scope does not allow this route';

/**
 * The customer routes a key opens, as platform.md's scope table says ("Using a key"): `read` keys
 * and `full` keys may call READ, only `full` keys WRITE, `sending` and `full` keys SENDING, every key
 * ANY_KEY. Every other bearer route refuses a key.
 */
const READ = [
  'GET /api/v1/domains',
  'GET /api/v1/domains/:uuid',
  'GET /api/v1/suppression',
  'GET /api/v1/suppression/check',
  'GET /api/v1/suppression/export',
  'GET /api/v1/reports/summary',
  'GET /api/v1/reports/logs',
  'GET /api/v1/reports/logs/export',
  'GET /api/v1/reports/logs/:id',
  'GET /api/v1/reports/domains',
  'GET /api/v1/reports/bounces',
  'GET /api/v1/reports/providers',
  'GET /api/v1/reports/bounce-categories',
  'GET /api/v1/reports/alerts',
  'GET /api/v1/billings',
  'GET /api/v1/billings/:uuid',
  'GET /api/v1/billings/packages',
  'GET /api/v1/webhooks',
  'GET /api/v1/webhooks/:uuid',
  'GET /api/v1/webhooks/:uuid/deliveries',
  'GET /api/v1/webhooks/:uuid/deliveries/:deliveryUuid',
];
const WRITE = [
  'POST /api/v1/domains',
  'POST /api/v1/domains/:uuid/verify',
  'DELETE /api/v1/domains/:uuid',
  'POST /api/v1/suppression',
  'DELETE /api/v1/suppression/:uuid',
  'POST /api/v1/webhooks',
  'PATCH /api/v1/webhooks/:uuid',
  'DELETE /api/v1/webhooks/:uuid',
  // The secret is never a read key's.
  'GET /api/v1/webhooks/:uuid/secret',
  'POST /api/v1/webhooks/:uuid/rotate-secret',
  'POST /api/v1/webhooks/:uuid/test',
  'POST /api/v1/webhooks/:uuid/deliveries/:deliveryUuid/retry',
  'POST /api/v1/webhooks/:uuid/replay',
];
/** Sending keys (and full ones) send, and cancel what they scheduled. */
const SENDING = [
  'POST /api/v1/emails',
  'POST /api/v1/emails/batch',
  'POST /api/v1/emails/raw',
  'DELETE /api/v1/emails/:id',
];
const READ_ONLY_LIST = ['GET /api/v1/emails'];
/** A message is read by any key of its company: its sender's and readers'. */
const ANY_KEY = ['GET /api/v1/emails/:id'];

/** The scopes that open a route; none for a route no key may call. */
function scopesOpening(route: string): string[] {
  if (READ.includes(route) || READ_ONLY_LIST.includes(route)) return ['read', 'full'];
  if (WRITE.includes(route)) return ['full'];
  if (SENDING.includes(route)) return ['sending', 'full'];
  if (ANY_KEY.includes(route)) return ['read', 'sending', 'full'];
  return [];
}

const keyBearer = (key: string): [string, string] => ['authorization', `Bearer ${key}`];

async function makeKey(
  t: TestApp,
  owner: LoggedIn,
  body: Record<string, unknown> = {},
): Promise<{ key: string; uuid: string; data: Record<string, unknown> }> {
  const res = await t
    .http()
    .post('/api/v1/api-keys')
    .set(...bearer(owner.accessToken))
    .send({ name: 'integration', scope: 'read', ...body });
  expect([res.status, res.body.msg]).toEqual([201, 'API key created: keep the key, it is not shown again']);
  return { key: res.body.data.key, uuid: res.body.data.apiKey.uuid, data: res.body.data.apiKey };
}

const keyRow = (t: TestApp, uuid: string) =>
  t.dataSource
    .getRepository(ApiKey)
    .createQueryBuilder('k')
    .addSelect('k.digest')
    .where('k.uuid = :uuid', { uuid })
    .getOneOrFail();

describe('API keys (platform.md "API keys")', () => {
  let database: FreshDatabase;
  let t: TestApp;
  let owner: Owner;
  let company: Company;

  beforeAll(async () => {
    database = await freshDatabase();
    t = await createTestApp({ database });
    owner = await createActiveUser(t);
    company = await t.dataSource.getRepository(Company).findOneByOrFail({ uuid: owner.companyUuid });
  });
  afterAll(async () => {
    await t.close();
    await database.drop();
  });

  describe('the owner makes, reads, changes and revokes keys', () => {
    it('answers the secret once: rk_ and 43 characters; only its SHA-256 digest and hint are kept', async () => {
      await storeDomain(t, company.id, 'keys.example');
      const before = Date.now();
      const res = await t
        .http()
        .post('/api/v1/api-keys')
        .set(...bearer(owner.accessToken))
        .send({
          name: '  billing system ',
          scope: 'full',
          domains: ['KEYS.example'],
          allowedIps: ['192.0.2.0/24', '127.0.0.1', '127.0.0.1'],
        })
        .expect(201);
      const { key, apiKey } = res.body.data;
      expect(key).toMatch(KEY_SHAPE);
      expect(apiKey).toEqual({
        uuid: expect.any(String),
        companyUuid: owner.companyUuid,
        name: 'billing system',
        scope: 'full',
        domains: ['keys.example'],
        allowedIps: ['192.0.2.0/24', '127.0.0.1'],
        hint: key.slice(0, 12),
        expiresAt: null,
        lastUsedAt: null,
        lastUsedIp: null,
        createdByUserUuid: owner.userUuid,
        createdAt: expect.any(String),
        revokedAt: null,
      });
      expect(Date.parse(apiKey.createdAt)).toBeGreaterThanOrEqual(before - 1000);

      const row = await keyRow(t, apiKey.uuid);
      expect(row.digest).toBe(createHash('sha256').update(key).digest('hex'));
      expect(JSON.stringify(row)).not.toContain(key.slice(12));

      // Never shown again: not in the list, not in the key's own read.
      const list = await t
        .http()
        .get('/api/v1/api-keys')
        .set(...bearer(owner.accessToken))
        .expect(200);
      expect(list.body.data.items.map((k: { uuid: string }) => k.uuid)).toContain(apiKey.uuid);
      const one = await t
        .http()
        .get(`/api/v1/api-keys/${apiKey.uuid}`)
        .set(...bearer(owner.accessToken))
        .expect(200);
      expect(one.body.data).toEqual(apiKey);
      for (const body of [list.text, one.text]) {
        expect(body).not.toContain(key.slice(12));
        expect(body).not.toContain(row.digest);
      }
    });

    it.each<[string, Record<string, unknown>, string | RegExp]>([
      ['an empty name', { name: '  ' }, /name/],
      ['a name of 101 characters', { name: 'n'.repeat(101) }, /name/],
      ['an unknown scope', { scope: 'admin' }, /scope/],
      [
        'a domain that is not the company’s',
        { domains: ['elsewhere.example'] },
        "domains: elsewhere.example is not one of the company's domains",
      ],
      ['a network too wide', { allowedIps: ['10.0.0.0/8'] }, /10\.0\.0\.0\/8 is too wide/],
      ['a past expiry', { expiresAt: '2020-01-01T00:00:00Z' }, 'expiresAt must be in the future'],
      [
        'an expiry 3 years ahead',
        { expiresAt: new Date(Date.now() + 3 * 365 * 86_400_000).toISOString() },
        'expiresAt must be at most 2 years ahead',
      ],
      ['a date that is no date', { expiresAt: 'tomorrow' }, /expiresAt/],
      ['an unknown field', { admin: true }, /admin/],
    ])('refuses %s with a 400 and writes nothing', async (_case, body, message) => {
      const before = await t.dataSource.getRepository(ApiKey).count();
      const res = await t
        .http()
        .post('/api/v1/api-keys')
        .set(...bearer(owner.accessToken))
        .send({ name: 'x', scope: 'read', ...body });
      expect(res.status).toBe(400);
      expectFailure(res.body, 400);
      const said = `${res.body.msg} ${JSON.stringify(res.body.error.details ?? [])}`;
      if (typeof message === 'string') expect(said).toContain(message);
      else expect(said).toMatch(message);
      expect(await t.dataSource.getRepository(ApiKey).count()).toBe(before);
    });

    it('is for the owner only: a member gets 403, another company 404, a key 403', async () => {
      const { uuid, key } = await makeKey(t, owner);
      const member = await createActiveMember(t, owner);
      const refused = await t
        .http()
        .post('/api/v1/api-keys')
        .set(...bearer(member.accessToken))
        .send({ name: 'm', scope: 'read' });
      expectFailure(refused.body, 403, 'Only the company owner may do this');
      const other = await createActiveUser(t);
      for (const method of ['get', 'patch', 'delete'] as const) {
        const res = await t
          .http()
          [method](`/api/v1/api-keys/${uuid}`)
          .set(...bearer(other.accessToken))
          .send({});
        expectFailure(res.body, 404, 'API key not found');
      }
      const list = await t
        .http()
        .get('/api/v1/api-keys')
        .set(...bearer(other.accessToken))
        .expect(200);
      expect(list.body.data).toEqual({
        items: [],
        meta: { page: 1, limit: 20, totalItems: 0, totalPages: 0 },
      });
      const byKey = await t
        .http()
        .get('/api/v1/api-keys')
        .set(...keyBearer(key));
      expectFailure(byKey.body, 403, USER_ONLY);
      expect((await keyRow(t, uuid)).revokedAt).toBeNull();
    });

    it('changes name, domains and networks (scope and expiry cannot change); the change applies at once', async () => {
      await storeDomain(t, company.id, 'patch.example', 'pending');
      const { uuid, key } = await makeKey(t, owner, { allowedIps: ['127.0.0.1'] });
      await t
        .http()
        .get('/api/v1/domains')
        .set(...keyBearer(key))
        .expect(200);

      const res = await t
        .http()
        .patch(`/api/v1/api-keys/${uuid}`)
        .set(...bearer(owner.accessToken))
        .send({ name: 'renamed', domains: ['patch.example'], allowedIps: ['192.0.2.7'] })
        .expect(200);
      expect(res.body.data).toMatchObject({
        name: 'renamed',
        domains: ['patch.example'],
        allowedIps: ['192.0.2.7'],
      });
      expect(await keyRow(t, uuid)).toMatchObject({
        name: 'renamed',
        domains: ['patch.example'],
        allowedIps: ['192.0.2.7'],
      });
      // The key's cached networks are forgotten: the next request is judged on the new list.
      const refused = await t
        .http()
        .get('/api/v1/domains')
        .set(...keyBearer(key));
      expectFailure(refused.body, 403, 'API key not allowed from this address');

      for (const body of [{ scope: 'full' }, { expiresAt: '2030-01-01T00:00:00Z' }]) {
        const bad = await t
          .http()
          .patch(`/api/v1/api-keys/${uuid}`)
          .set(...bearer(owner.accessToken))
          .send(body);
        expect(bad.status).toBe(400);
      }
      expect(await keyRow(t, uuid)).toMatchObject({ scope: 'read', expiresAt: null });
    });

    it('revokes: the very next request with the key is a 401; revoked keys are listed apart; a revoked key cannot change', async () => {
      const { uuid, key } = await makeKey(t, owner);
      await t
        .http()
        .get('/api/v1/domains')
        .set(...keyBearer(key))
        .expect(200);
      await t
        .http()
        .delete(`/api/v1/api-keys/${uuid}`)
        .set(...bearer(owner.accessToken))
        .expect(200);
      expectFailure(
        (
          await t
            .http()
            .get('/api/v1/domains')
            .set(...keyBearer(key))
        ).body,
        401,
        'API key revoked',
      );
      const revokedAt = (await keyRow(t, uuid)).revokedAt;
      expect(revokedAt).toBeInstanceOf(Date);
      // Again: nothing changes.
      await t
        .http()
        .delete(`/api/v1/api-keys/${uuid}`)
        .set(...bearer(owner.accessToken))
        .expect(200);
      expect((await keyRow(t, uuid)).revokedAt).toEqual(revokedAt);

      const inUse = await t
        .http()
        .get('/api/v1/api-keys')
        .set(...bearer(owner.accessToken))
        .expect(200);
      expect(inUse.body.data.items.map((k: { uuid: string }) => k.uuid)).not.toContain(uuid);
      const revoked = await t
        .http()
        .get('/api/v1/api-keys?revoked=true')
        .set(...bearer(owner.accessToken))
        .expect(200);
      expect(revoked.body.data.items.map((k: { uuid: string }) => k.uuid)).toContain(uuid);
      const patch = await t
        .http()
        .patch(`/api/v1/api-keys/${uuid}`)
        .set(...bearer(owner.accessToken))
        .send({ name: 'x' });
      expectFailure(patch.body, 409, 'API key revoked: make a new one');
    });

    it('holds at most 50 keys in use: one more is a 409; revoked keys do not count', async () => {
      const other = await createActiveUser(t);
      const otherCompany = await t.dataSource
        .getRepository(Company)
        .findOneByOrFail({ uuid: other.companyUuid });
      const repo = t.dataSource.getRepository(ApiKey);
      const row = (revokedAt: Date | null) =>
        repo.create({
          companyId: otherCompany.id,
          name: 'filler',
          scope: 'read',
          digest: newApiKey().digest,
          hint: 'rk_filler123',
          revokedAt,
        });
      await repo.save([...Array.from({ length: 49 }, () => row(null)), row(new Date())]);
      await makeKey(t, other);
      const res = await t
        .http()
        .post('/api/v1/api-keys')
        .set(...bearer(other.accessToken))
        .send({ name: 'one more', scope: 'read' });
      expectFailure(res.body, 409, /at most 50 keys in use/);
      expect(await repo.countBy({ companyId: otherCompany.id })).toBe(51);
    });

    it('drops a deleted domain from the keys that named it', async () => {
      const domain = await storeDomain(t, company.id, 'dropped.example', 'pending');
      const { uuid } = await makeKey(t, owner, { domains: ['dropped.example'] });
      await t
        .http()
        .delete(`/api/v1/domains/${domain.uuid}`)
        .set(...bearer(owner.accessToken))
        .expect(200);
      const res = await t
        .http()
        .get(`/api/v1/api-keys/${uuid}`)
        .set(...bearer(owner.accessToken))
        .expect(200);
      expect(res.body.data.domains).toEqual([]);
    });

    it('lets an admin list a company’s keys and revoke one; the key is refused at once', async () => {
      const { uuid, key } = await makeKey(t, owner);
      await t
        .http()
        .get('/api/v1/domains')
        .set(...keyBearer(key))
        .expect(200);
      const { accessToken } = await createAdmin(t, 'admin');
      const list = await t
        .http()
        .get(`/api/v1/admins/companies/${owner.companyUuid}/api-keys`)
        .set(...bearer(accessToken))
        .expect(200);
      expect(list.body.data.items.map((k: { uuid: string }) => k.uuid)).toContain(uuid);
      expect(list.text).not.toContain(key.slice(12));
      const unknown = await t
        .http()
        .delete(`/api/v1/admins/companies/${randomUUID()}/api-keys/${uuid}`)
        .set(...bearer(accessToken));
      expectFailure(unknown.body, 404, 'Company not found');
      const otherCompanyKey = await t
        .http()
        .delete(`/api/v1/admins/companies/${owner.companyUuid}/api-keys/${randomUUID()}`)
        .set(...bearer(accessToken));
      expectFailure(otherCompanyKey.body, 404, 'API key not found');
      await t
        .http()
        .delete(`/api/v1/admins/companies/${owner.companyUuid}/api-keys/${uuid}`)
        .set(...bearer(accessToken))
        .expect(200);
      expectFailure(
        (
          await t
            .http()
            .get('/api/v1/domains')
            .set(...keyBearer(key))
        ).body,
        401,
        'API key revoked',
      );
    });
  });

  describe('a key acts for its company on the routes its scope opens', () => {
    it('reads its own company’s data only', async () => {
      const mine = await storeDomain(t, company.id, 'mine.example');
      const other = await createActiveUser(t);
      const otherCompany = await t.dataSource
        .getRepository(Company)
        .findOneByOrFail({ uuid: other.companyUuid });
      const theirs = await storeDomain(t, otherCompany.id, 'theirs.example');
      const { key } = await makeKey(t, owner);
      const list = await t
        .http()
        .get('/api/v1/domains?limit=100')
        .set(...keyBearer(key))
        .expect(200);
      const names = list.body.data.items.map((d: { name: string }) => d.name);
      expect(names).toContain('mine.example');
      expect(names).not.toContain('theirs.example');
      await t
        .http()
        .get(`/api/v1/domains/${mine.uuid}`)
        .set(...keyBearer(key))
        .expect(200);
      expectFailure(
        (
          await t
            .http()
            .get(`/api/v1/domains/${theirs.uuid}`)
            .set(...keyBearer(key))
        ).body,
        404,
        'Domain not found',
      );
    });

    it('writes with a full key: a domain added by a key is the company’s', async () => {
      const { key } = await makeKey(t, owner, { scope: 'full' });
      const res = await t
        .http()
        .post('/api/v1/domains')
        .set(...keyBearer(key))
        .send({ name: 'by-key.example' })
        .expect(201);
      expect(res.body.data.companyUuid).toBe(owner.companyUuid);
      expect(
        await t.dataSource.getRepository(Domain).findOneByOrFail({ name: 'by-key.example' }),
      ).toMatchObject({ companyId: company.id });
    });

    it('refuses an unknown, malformed, revoked or expired key with 401, and an address outside its networks with 403', async () => {
      expectFailure(
        (
          await t
            .http()
            .get('/api/v1/domains')
            .set(...keyBearer(newApiKey().key))
        ).body,
        401,
        'Invalid API key',
      );
      expectFailure(
        (
          await t
            .http()
            .get('/api/v1/domains')
            .set(...keyBearer('rk_short'))
        ).body,
        401,
        'Invalid API key',
      );
      const expiring = await makeKey(t, owner, {
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      });
      await t.dataSource
        .getRepository(ApiKey)
        .update({ uuid: expiring.uuid }, { expiresAt: new Date(Date.now() - 1000) });
      expectFailure(
        (
          await t
            .http()
            .get('/api/v1/domains')
            .set(...keyBearer(expiring.key))
        ).body,
        401,
        'API key expired',
      );
      const fenced = await makeKey(t, owner, { allowedIps: ['192.0.2.0/24'] });
      expectFailure(
        (
          await t
            .http()
            .get('/api/v1/domains')
            .set(...keyBearer(fenced.key))
        ).body,
        403,
        'API key not allowed from this address',
      );
      const open = await makeKey(t, owner, { allowedIps: ['127.0.0.0/24', '::1'] });
      await t
        .http()
        .get('/api/v1/domains')
        .set(...keyBearer(open.key))
        .expect(200);
    });

    it('notes when and from where a key was last used, at most once a minute', async () => {
      const { uuid, key } = await makeKey(t, owner);
      await t
        .http()
        .get('/api/v1/domains')
        .set(...keyBearer(key))
        .expect(200);
      await t.settle();
      const first = await keyRow(t, uuid);
      expect(first.lastUsedAt).toBeInstanceOf(Date);
      expect(first.lastUsedIp).toMatch(/^(::ffff:)?127\.0\.0\.1$|^::1$/);
      await t
        .http()
        .get('/api/v1/domains')
        .set(...keyBearer(key))
        .expect(200);
      await t.settle();
      expect((await keyRow(t, uuid)).lastUsedAt).toEqual(first.lastUsedAt);
    });

    it('walks every bearer route of the router with a read, a sending and a full key', async () => {
      const keys = {
        read: (await makeKey(t, owner, { scope: 'read' })).key,
        sending: (await makeKey(t, owner, { scope: 'sending' })).key,
        full: (await makeKey(t, owner, { scope: 'full' })).key,
      };
      const routes = [
        ...new Set(
          t.routes
            .filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS' && !r.url.startsWith('/api-docs'))
            .map((r) => `${r.method} ${r.url}`),
        ),
      ].sort();
      for (const listed of [...READ, ...WRITE, ...SENDING, ...READ_ONLY_LIST, ...ANY_KEY])
        expect(routes).toContain(listed);
      const problems: string[] = [];
      let bearerRoutes = 0;
      for (const route of routes) {
        const [method, url] = route.split(' ');
        const path = url.replace(/:[A-Za-z0-9_]+/g, () => randomUUID());
        const bare = await t.http()[method.toLowerCase() as Method](path);
        if (bare.body?.msg !== 'Missing bearer token') continue;
        bearerRoutes += 1;
        for (const [scope, key] of Object.entries(keys)) {
          const res = await t
            .http()
            [method.toLowerCase() as Method](path)
            .set(...keyBearer(key));
          const opens = scopesOpening(route);
          const expected = opens.includes(scope)
            ? 'past the guard'
            : `403 ${opens.length ? OUT_OF_SCOPE : USER_ONLY}`;
          const got =
            res.status === 401 || res.status === 403 ? `${res.status} ${res.body.msg}` : 'past the guard';
          if (got !== expected) problems.push(`${route} with a ${scope} key: ${got}, expected ${expected}`);
        }
      }
      expect(problems).toEqual([]);
      expect(bearerRoutes).toBeGreaterThan(60);
    });
  });

  it('counts a key’s requests per key, not per address (API_KEY_RATE_LIMIT_PER_MINUTE)', async () => {
    const limited = await createTestApp({
      // Five requests of the address make the owner and two keys; the address may make six.
      env: { API_KEY_RATE_LIMIT_PER_MINUTE: '3', RATE_LIMIT_PER_MINUTE: '6' },
    });
    try {
      const boss = await createActiveUser(limited);
      const first = await makeKey(limited, boss);
      const second = await makeKey(limited, boss);
      for (let i = 0; i < 3; i++)
        await limited
          .http()
          .get('/api/v1/domains')
          .set(...keyBearer(first.key))
          .expect(200);
      const over = await limited
        .http()
        .get('/api/v1/domains')
        .set(...keyBearer(first.key));
      expectFailure(over.body, 429, 'Too many requests, try again later');
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
      // Three more from the same address, counted against the second key only.
      for (let i = 0; i < 3; i++)
        await limited
          .http()
          .get('/api/v1/domains')
          .set(...keyBearer(second.key))
          .expect(200);
    } finally {
      await limited.close();
    }
  });

  it('is refused by a second process at once after a revocation in the first (change notices)', async () => {
    const second = await createTestApp({ database });
    try {
      const { uuid, key } = await makeKey(t, owner);
      await second
        .http()
        .get('/api/v1/domains')
        .set(...keyBearer(key))
        .expect(200);
      // PostgreSQL delivers the notice a few milliseconds after the commit; SQLite when the next
      // request of the second process catches up.
      const heard = process.env.DATABASE_URL
        ? new Promise<void>((resolve) => second.app.get(ApiKeyEvents).onChange((c) => void (c && resolve())))
        : Promise.resolve();
      await t
        .http()
        .delete(`/api/v1/api-keys/${uuid}`)
        .set(...bearer(owner.accessToken))
        .expect(200);
      await heard;
      expectFailure(
        (
          await second
            .http()
            .get('/api/v1/domains')
            .set(...keyBearer(key))
        ).body,
        401,
        'API key revoked',
      );
    } finally {
      await second.close();
    }
  });
});
