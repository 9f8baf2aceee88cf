import { IsNull, Repository } from 'typeorm';
import { Company } from '../src/modules/companies/entities/company.entity';
import { SuppressionEntry } from '../src/modules/suppression/entities/suppression-entry.entity';
import { bearer, countRows, createActiveUser, createAdmin, expectFailure } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

describe('Suppression lists', () => {
  let t: TestApp;
  let entries: Repository<SuppressionEntry>;
  let user: { token: string; companyUuid: string; companyId: number };
  let other: { token: string; companyUuid: string; companyId: number };
  let staff: string;
  let accounting: string;

  async function companyUser() {
    const created = await createActiveUser(t);
    const company = await t.dataSource.getRepository(Company).findOneByOrFail({ uuid: created.companyUuid });
    return { token: created.accessToken, companyUuid: created.companyUuid, companyId: company.id };
  }

  /** Stores an entry directly (what the log and provider areas will do). */
  function store(fields: Partial<SuppressionEntry> & { email: string }): Promise<SuppressionEntry> {
    return entries.save(entries.create({ reason: 'manual', source: 'admin', companyId: null, ...fields }));
  }

  beforeAll(async () => {
    t = await createTestApp({ smtp: true });
    entries = t.dataSource.getRepository(SuppressionEntry);
    user = await companyUser();
    other = await companyUser();
    staff = (await createAdmin(t, 'admin')).accessToken;
    accounting = (await createAdmin(t, 'accounting')).accessToken;
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    await entries.clear();
  });

  describe('a company user', () => {
    it('adds addresses once: normalised, deduplicated, the invalid ones reported (201, then 200)', async () => {
      const res = await t
        .http()
        .post('/api/v1/suppression')
        .set(...bearer(user.token))
        .send({
          emails: [' Jo@Example.NET ', 'jo@example.net', 'not-an-address', 'ann@example.org'],
          detail: 'asked',
        })
        .expect(201);
      expect(res.body).toMatchObject({ status: 'success', code: 201, msg: 'Suppression list updated' });
      expect(res.body.data).toEqual({ added: 2, existing: 0, invalid: ['not-an-address'] });
      const rows = await entries.find({ order: { email: 'ASC' } });
      expect(rows.map((r) => [r.email, r.companyId, r.reason, r.source, r.detail])).toEqual([
        ['ann@example.org', user.companyId, 'manual', 'user', 'asked'],
        ['jo@example.net', user.companyId, 'manual', 'user', 'asked'],
      ]);

      const again = await t
        .http()
        .post('/api/v1/suppression')
        .set(...bearer(user.token))
        .send({ emails: ['JO@example.net', 'new@example.com'], reason: 'unsubscribe' })
        .expect(201);
      expect(again.body.data).toEqual({ added: 1, existing: 1, invalid: [] });

      const nothingNew = await t
        .http()
        .post('/api/v1/suppression')
        .set(...bearer(user.token))
        .send({ emails: ['new@example.com'] })
        .expect(200);
      expect(nothingNew.body).toMatchObject({ code: 200, data: { added: 0, existing: 1, invalid: [] } });
      expect(await entries.count()).toBe(3);
      expect((await entries.findOneByOrFail({ email: 'new@example.com' })).reason).toBe('unsubscribe');
    });

    it.each([
      ['a reason only admins give', { emails: ['a@example.com'], reason: 'complaint' }],
      ['no addresses', { emails: [] }],
      ['1,001 addresses', { emails: Array.from({ length: 1001 }, (_, i) => `u${i}@example.com`) }],
      ['a number among the addresses', { emails: ['a@example.com', 42] }],
      ['an unknown field', { emails: ['a@example.com'], companyUuid: UNKNOWN_UUID }],
    ])('refuses %s with 400 and writes nothing', async (_case, body) => {
      const res = await t
        .http()
        .post('/api/v1/suppression')
        .set(...bearer(user.token))
        .send(body)
        .expect(400);
      expectFailure(res.body, 400);
      expect(await countRows(t, 'suppression_entries')).toBe(0);
    });

    it('lists only its own company, with filters and paging', async () => {
      await store({
        email: 'a1@example.com',
        companyId: user.companyId,
        reason: 'hard_bounce',
        source: 'log',
      });
      await store({ email: 'b2@example.com', companyId: user.companyId, reason: 'manual', source: 'user' });
      await store({ email: 'c3@example.com', companyId: user.companyId, reason: 'manual', source: 'user' });
      await store({ email: 'theirs@example.com', companyId: other.companyId });
      await store({ email: 'global@example.com' });

      const all = await t
        .http()
        .get('/api/v1/suppression?limit=2')
        .set(...bearer(user.token))
        .expect(200);
      expect(all.body.data.meta).toEqual({ page: 1, limit: 2, totalItems: 3, totalPages: 2 });
      expect(all.body.data.items).toHaveLength(2);
      expect(all.body.data.items[0]).toMatchObject({
        companyUuid: user.companyUuid,
        email: 'c3@example.com',
      });

      const bounced = await t
        .http()
        .get('/api/v1/suppression?reason=hard_bounce')
        .set(...bearer(user.token))
        .expect(200);
      expect(bounced.body.data.items.map((e: { email: string }) => e.email)).toEqual(['a1@example.com']);

      const searched = await t
        .http()
        .get('/api/v1/suppression?search=B2@')
        .set(...bearer(user.token))
        .expect(200);
      expect(searched.body.data.items.map((e: { email: string }) => e.email)).toEqual(['b2@example.com']);

      const wildcard = await t
        .http()
        .get('/api/v1/suppression?search=%25')
        .set(...bearer(user.token))
        .expect(200);
      expect(wildcard.body.data.items).toEqual([]);

      await t
        .http()
        .get('/api/v1/suppression?reason=sometimes')
        .set(...bearer(user.token))
        .expect(400);
    });

    it('checks an address against its own list, then the global one, ignoring expired entries', async () => {
      await store({
        email: 'own@example.com',
        companyId: user.companyId,
        reason: 'unsubscribe',
        source: 'user',
      });
      await store({ email: 'both@example.com', companyId: user.companyId });
      await store({ email: 'both@example.com' });
      await store({ email: 'global@example.com', reason: 'spam_report', source: 'spam_report' });
      await store({ email: 'theirs@example.com', companyId: other.companyId });
      await store({
        email: 'old@example.com',
        companyId: user.companyId,
        expiresAt: new Date(Date.now() - 1000),
      });

      const check = async (email: string) =>
        (
          await t
            .http()
            .get(`/api/v1/suppression/check?email=${encodeURIComponent(email)}`)
            .set(...bearer(user.token))
            .expect(200)
        ).body.data;

      expect(await check('OWN@example.com')).toMatchObject({
        suppressed: true,
        global: false,
        entry: { email: 'own@example.com', companyUuid: user.companyUuid, reason: 'unsubscribe' },
      });
      expect(await check('both@example.com')).toMatchObject({
        suppressed: true,
        global: true,
        entry: { companyUuid: user.companyUuid },
      });
      expect(await check('global@example.com')).toMatchObject({
        suppressed: true,
        global: true,
        entry: { companyUuid: null, reason: 'spam_report' },
      });
      expect(await check('theirs@example.com')).toEqual({ suppressed: false, global: false });
      expect(await check('old@example.com')).toEqual({ suppressed: false, global: false });

      const bad = await t
        .http()
        .get('/api/v1/suppression/check?email=nope')
        .set(...bearer(user.token))
        .expect(400);
      expectFailure(bad.body, 400);
    });

    it('removes its own entries, but not complaints (403), nor others\u2019 or global ones (404)', async () => {
      const own = await store({ email: 'own@example.com', companyId: user.companyId });
      const complaint = await store({
        email: 'angry@example.com',
        companyId: user.companyId,
        reason: 'complaint',
        source: 'mail_provider',
      });
      const theirs = await store({ email: 'theirs@example.com', companyId: other.companyId });
      const global = await store({ email: 'global@example.com' });
      const del = (uuid: string) =>
        t
          .http()
          .delete(`/api/v1/suppression/${uuid}`)
          .set(...bearer(user.token));

      const removed = await del(own.uuid).expect(200);
      expect(removed.body).toMatchObject({ status: 'success', data: {} });
      expect(await entries.findOneBy({ uuid: own.uuid })).toBeNull();

      expectFailure(
        (await del(complaint.uuid).expect(403)).body,
        403,
        'Complaint entries can only be removed by an admin',
      );
      expectFailure((await del(theirs.uuid).expect(404)).body, 404, 'Suppression entry not found');
      expectFailure((await del(global.uuid).expect(404)).body, 404);
      expectFailure((await del(UNKNOWN_UUID).expect(404)).body, 404);
      await del('not-a-uuid').expect(400);
      expect(await entries.count()).toBe(3);
    });

    it('exports its own list as a CSV attachment, with cells a spreadsheet will not run', async () => {
      await store({ email: 'a@example.com', companyId: user.companyId, detail: '=HYPERLINK("x")' });
      await store({ email: 'b@example.com', companyId: user.companyId, detail: 'said "stop", twice' });
      await store({ email: 'theirs@example.com', companyId: other.companyId });

      const res = await t
        .http()
        .get('/api/v1/suppression/export')
        .set(...bearer(user.token))
        .expect(200);
      expect(res.headers['content-type']).toMatch(/^text\/csv/);
      expect(res.headers['content-disposition']).toBe('attachment; filename="suppression.csv"');
      const lines = res.text.trim().split('\n');
      expect(lines[0]).toBe('email,reason,source,detail,expires_at,created_at');
      expect(lines).toHaveLength(3);
      expect(lines[1]).toMatch(/^a@example\.com,manual,admin,"'=HYPERLINK\(""x""\)",,\d{4}-/);
      expect(lines[2]).toMatch(/^b@example\.com,manual,admin,"said ""stop"", twice",,\d{4}-/);
    });

    it('counts each address once when the same list is posted at the same moment', async () => {
      for (let round = 0; round < 3; round++) {
        const emails = Array.from({ length: 50 }, (_, i) => `dup${round}-${i}@example.com`);
        const results = await Promise.all(
          [0, 1, 2].map(() =>
            t
              .http()
              .post('/api/v1/suppression')
              .set(...bearer(user.token))
              .send({ emails }),
          ),
        );
        const added = results.map((r) => r.body.data.added as number);
        expect(added.reduce((a, b) => a + b, 0)).toBe(50);
        expect(results.map((r) => r.body.data.added + r.body.data.existing)).toEqual([50, 50, 50]);
      }
      expect(await entries.countBy({ companyId: user.companyId })).toBe(150);
    });
  });

  describe('an admin', () => {
    it('adds to the global list or to a company’s, with an expiry in the future', async () => {
      const global = await t
        .http()
        .post('/api/v1/admins/suppression')
        .set(...bearer(staff))
        .send({ emails: ['trap@example.com'], reason: 'spam_report', detail: 'spam trap' })
        .expect(201);
      expect(global.body.data).toEqual({ added: 1, existing: 0, invalid: [] });
      expect(await entries.findOneByOrFail({ email: 'trap@example.com' })).toMatchObject({
        companyId: null,
        reason: 'spam_report',
        source: 'admin',
        detail: 'spam trap',
        expiresAt: null,
      });

      const expiresAt = new Date(Date.now() + 86_400_000);
      await t
        .http()
        .post('/api/v1/admins/suppression')
        .set(...bearer(staff))
        .send({
          emails: ['x@example.com'],
          reason: 'complaint',
          companyUuid: user.companyUuid,
          expiresAt: expiresAt.toISOString(),
        })
        .expect(201);
      const stored = await entries.findOneByOrFail({ email: 'x@example.com' });
      expect(stored.companyId).toBe(user.companyId);
      expect(stored.expiresAt?.getTime()).toBe(expiresAt.getTime());
      // The company's user sees it, and may not remove a complaint.
      const listed = await t
        .http()
        .get('/api/v1/suppression')
        .set(...bearer(user.token))
        .expect(200);
      expect(listed.body.data.items.map((e: { email: string }) => e.email)).toEqual(['x@example.com']);
    });

    it('refuses a past expiry, an unknown company and a missing reason, writing nothing', async () => {
      const post = (body: object) =>
        t
          .http()
          .post('/api/v1/admins/suppression')
          .set(...bearer(staff))
          .send(body);
      expectFailure(
        (
          await post({
            emails: ['a@example.com'],
            reason: 'manual',
            expiresAt: '2020-01-01T00:00:00Z',
          }).expect(400)
        ).body,
        400,
        'expiresAt must be a date in the future',
      );
      expectFailure(
        (await post({ emails: ['a@example.com'], reason: 'manual', companyUuid: UNKNOWN_UUID }).expect(404))
          .body,
        404,
        'Company not found',
      );
      await post({ emails: ['a@example.com'] }).expect(400);
      await post({ emails: ['a@example.com'], reason: 'manual', expiresAt: 'tomorrow' }).expect(400);
      expect(await countRows(t, 'suppression_entries')).toBe(0);
    });

    it('renews an expired entry instead of counting it as existing', async () => {
      const old = await store({ email: 'back@example.com', expiresAt: new Date(Date.now() - 1000) });
      const res = await t
        .http()
        .post('/api/v1/admins/suppression')
        .set(...bearer(staff))
        .send({ emails: ['back@example.com'], reason: 'hard_bounce' })
        .expect(201);
      expect(res.body.data).toEqual({ added: 1, existing: 0, invalid: [] });
      expect(await entries.findOneByOrFail({ uuid: old.uuid })).toMatchObject({
        reason: 'hard_bounce',
        expiresAt: null,
      });
      expect(await entries.count()).toBe(1);
    });

    it('lists every list, the global one, or one company’s', async () => {
      await store({ email: 'g@example.com' });
      await store({ email: 'u@example.com', companyId: user.companyId });
      await store({ email: 'o@example.com', companyId: other.companyId });
      const emails = async (query: string) =>
        (
          await t
            .http()
            .get(`/api/v1/admins/suppression${query}`)
            .set(...bearer(staff))
            .expect(200)
        ).body.data.items
          .map((e: { email: string }) => e.email)
          .sort();

      expect(await emails('')).toEqual(['g@example.com', 'o@example.com', 'u@example.com']);
      expect(await emails('?companyUuid=global')).toEqual(['g@example.com']);
      expect(await emails(`?companyUuid=${other.companyUuid}`)).toEqual(['o@example.com']);
      await t
        .http()
        .get('/api/v1/admins/suppression?companyUuid=everyone')
        .set(...bearer(staff))
        .expect(400);
      await t
        .http()
        .get(`/api/v1/admins/suppression?companyUuid=${UNKNOWN_UUID}`)
        .set(...bearer(staff))
        .expect(404);
    });

    it('removes any entry, complaints included; accounting may not touch the lists', async () => {
      const complaint = await store({
        email: 'c@example.com',
        companyId: user.companyId,
        reason: 'complaint',
      });
      await t
        .http()
        .delete(`/api/v1/admins/suppression/${complaint.uuid}`)
        .set(...bearer(accounting))
        .expect(403);
      await t
        .http()
        .delete(`/api/v1/admins/suppression/${complaint.uuid}`)
        .set(...bearer(staff))
        .expect(200);
      expect(await entries.countBy({ companyId: user.companyId })).toBe(0);
      await t
        .http()
        .delete(`/api/v1/admins/suppression/${complaint.uuid}`)
        .set(...bearer(staff))
        .expect(404);
      expect(await entries.countBy({ companyId: IsNull() })).toBe(0);
    });
  });
});
