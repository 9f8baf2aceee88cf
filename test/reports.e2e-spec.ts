import { Repository } from 'typeorm';
import { Company } from '../src/modules/companies/entities/company.entity';
import { CleanLog } from '../src/modules/log-index/entities/clean-log.entity';
import {
  bearer,
  createActiveUser,
  createAdmin,
  CreatedAdmin,
  expectFailure,
  RegisteredUser,
  LoggedIn,
} from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const KEY = 'log-shipper-key-for-tests-0123456789abcdef';
const USER = 'provider';
const PASSWORD = 'provider-webhook-password-0123456789';
const HOUR = 3_600_000;

/** An RFC 3339 syslog prefix `hoursAgo` hours before now. */
const at = (hoursAgo: number) => new Date(Date.now() - hoursAgo * HOUR).toISOString();

/**
 * Company mail of five recipients in two messages: two sent, one sent then delivered (and opened) by the
 * provider, one hard bounce, one deferral; the second message comes from a sender whose address a
 * spreadsheet would run as a formula.
 */
function companyLines(relayUsername: string, prefix: string): string {
  const q1 = `${prefix}1A1A1A1`;
  const q2 = `${prefix}2B2B2B2`;
  return [
    `${at(5)} relay1 postfix/smtpd[1]: ${q1}: client=h[1.2.3.4], sasl_method=PLAIN, sasl_username=${relayUsername}`,
    `${at(5)} relay1 postfix/cleanup[2]: ${q1}: message-id=<${prefix}-1@acme.example>`,
    `${at(5)} relay1 postfix/qmgr[3]: ${q1}: from=<news@acme.example>, size=1000, nrcpt=4 (queue active)`,
    `${at(4)} relay1 postfix/smtp[4]: ${q1}: to=<a@example.net>, relay=mx[10.0.0.1]:25, delay=1, delays=0/0/0/1, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as ${prefix}R1)`,
    `${at(4)} relay1 postfix/smtp[4]: ${q1}: to=<b@example.net>, relay=mx[10.0.0.1]:25, delay=1, delays=0/0/0/1, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as ${prefix}R1)`,
    `${at(3)} relay1 postfix/smtp[4]: ${q1}: to=<gone@bounce.example>, relay=mx[10.0.0.2]:25, delay=1, delays=0/0/0/1, dsn=5.1.1, status=bounced (host mx said: 550 5.1.1 No such user)`,
    `${at(3)} relay1 postfix/smtp[4]: ${q1}: to=<slow@example.org>, relay=mx[10.0.0.3]:25, delay=1, delays=0/0/0/1, dsn=4.2.0, status=deferred (host mx said: 450 4.2.0 Greylisted)`,
    `${at(2)} relay1 postfix/smtpd[1]: ${q2}: client=h[1.2.3.4], sasl_method=PLAIN, sasl_username=${relayUsername}`,
    `${at(2)} relay1 postfix/qmgr[3]: ${q2}: from=<=cmd|calc@other.example>, size=10, nrcpt=1 (queue active)`,
    `${at(1)} relay1 postfix/smtp[4]: ${q2}: to=<c@example.net>, relay=mx[10.0.0.1]:25, delay=1, delays=0/0/0/1, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as ${prefix}R2)`,
  ].join('\n');
}

describe('Delivery reports (/api/v1/reports, /api/v1/admins/reports)', () => {
  let t: TestApp;
  let companies: Repository<Company>;
  let logs: Repository<CleanLog>;
  let owner: RegisteredUser & LoggedIn;
  let other: RegisteredUser & LoggedIn;
  let admin: CreatedAdmin;
  const today = () => new Date().toISOString().slice(0, 10);
  const window = () =>
    `from=${new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10)}&to=${today()}`;

  const get = (path: string, token: string) =>
    t
      .http()
      .get(path)
      .set(...bearer(token));

  async function ship(user: RegisteredUser, prefix: string): Promise<Company> {
    const company = await companies.findOneByOrFail({ uuid: user.companyUuid });
    await companies.update({ id: company.id }, { quota: 1000 });
    await t
      .http()
      .post('/api/v1/callback-raw-log')
      .set('x-api-key', KEY)
      .set('content-type', 'text/plain')
      .send(companyLines(company.relayUsername, prefix))
      .expect(200);
    return company;
  }

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        LOG_SHIPPER_API_KEY: KEY,
        MAIL_PROVIDER_WEBHOOK_USER: USER,
        MAIL_PROVIDER_WEBHOOK_PASSWORD: PASSWORD,
      },
    });
    companies = t.dataSource.getRepository(Company);
    logs = t.dataSource.getRepository(CleanLog);
    owner = await createActiveUser(t);
    other = await createActiveUser(t);
    admin = await createAdmin(t, 'accounting');
    await ship(owner, 'AA');
    await ship(other, 'BB');
    // The provider confirms b@example.net of the owner's first message, which is then opened.
    await t
      .http()
      .post('/callback/mail-provider')
      .auth(USER, PASSWORD)
      .send([
        {
          event: 'delivered',
          email: 'b@example.net',
          timestamp: Date.now() / 1000 - 3000,
          sg_message_id: 'AAR1.x',
          sg_event_id: 'd1',
        },
        {
          event: 'open',
          email: 'b@example.net',
          timestamp: Date.now() / 1000 - 2000,
          sg_message_id: 'AAR1.y',
          sg_event_id: 'o1',
        },
      ])
      .expect(200);
  });
  afterAll(async () => {
    await t.close();
  });

  it('summary: counts and rates exact to the formulas, every day of the window in the series', async () => {
    const res = await get(`/api/v1/reports/summary?${window()}`, owner.accessToken).expect(200);
    expect(res.body).toMatchObject({ status: 'success', code: 200 });
    const { totals, rates, series } = res.body.data;
    expect(totals).toEqual({
      processed: 5,
      sent: 2,
      delivered: 1,
      deferred: 1,
      bounced: 1,
      rejected: 0,
      expired: 0,
      complained: 0,
      opened: 1,
      clicked: 0,
    });
    expect(rates).toEqual({ delivery: 3 / 5, bounce: 1 / 5, complaint: 0 });
    expect(series).toHaveLength(3);
    expect(series.map((p: { date: string }) => p.date)[2]).toBe(today());
    const summed = series.reduce((n: number, p: { processed: number }) => n + p.processed, 0);
    expect(summed).toBe(5);

    const byDomain = await get(
      `/api/v1/reports/summary?${window()}&senderDomain=acme.example&interval=month`,
      owner.accessToken,
    ).expect(200);
    expect(byDomain.body.data.totals.processed).toBe(4);
    expect(byDomain.body.data.series.length).toBeGreaterThanOrEqual(1);

    // A window of whole days reads the daily roll-up; one with times reads the records: the same figures.
    const from = new Date(Date.now() - 2 * 86_400_000).toISOString();
    const until = new Date().toISOString();
    const raw = await get(`/api/v1/reports/summary?from=${from}&to=${until}`, owner.accessToken).expect(200);
    expect(raw.body.data.totals).toEqual(totals);
    const company = await companies.findOneByOrFail({ uuid: owner.companyUuid });
    const cells: Array<{ n: string | number }> = await t.dataSource.query(
      t.dataSource.options.type === 'postgres'
        ? 'SELECT SUM(records) AS n FROM clean_log_daily WHERE company_id = $1'
        : 'SELECT SUM(records) AS n FROM clean_log_daily WHERE company_id = ?',
      [company.id],
    );
    expect(Number(cells[0].n)).toBe(5);
    const rawDomains = await get(
      `/api/v1/reports/domains?from=${from}&to=${until}`,
      owner.accessToken,
    ).expect(200);
    const dayDomains = await get(`/api/v1/reports/domains?${window()}`, owner.accessToken).expect(200);
    expect(rawDomains.body.data).toEqual(dayDomains.body.data);

    const empty = await get(
      '/api/v1/reports/summary?from=2020-01-01&to=2020-01-31',
      owner.accessToken,
    ).expect(200);
    expect(empty.body.data.totals.processed).toBe(0);
    expect(empty.body.data.rates).toEqual({ delivery: 0, bounce: 0, complaint: 0 });
    expect(empty.body.data.series).toHaveLength(31);
  });

  it('refuses a bad window (400) and an unknown interval', async () => {
    expectFailure(
      (await get('/api/v1/reports/summary?from=2025-01-01&to=2026-06-01', owner.accessToken).expect(400))
        .body,
      400,
      /366 days/,
    );
    expectFailure(
      (await get('/api/v1/reports/summary?to=2026-01-01', owner.accessToken).expect(400)).body,
      400,
    );
    expectFailure(
      (await get(`/api/v1/reports/summary?${window()}&interval=year`, owner.accessToken).expect(400)).body,
      400,
    );
    expectFailure(
      (await get('/api/v1/reports/summary?from=2026-02-01&to=2026-01-01', owner.accessToken).expect(400))
        .body,
      400,
    );
  });

  it('logs: newest first, paged by signed cursors, only the company’s; a tampered cursor is a 400', async () => {
    const first = await get(`/api/v1/reports/logs?${window()}&limit=2`, owner.accessToken).expect(200);
    expect(first.body.data.meta).toMatchObject({ limit: 2, totalItems: 5 });
    const seen: Array<{ to: string; lastEventAt: string; companyUuid: string }> = [...first.body.data.items];
    let cursor: string | null = first.body.data.meta.nextCursor;
    while (cursor) {
      const page = await get(
        `/api/v1/reports/logs?${window()}&limit=2&cursor=${encodeURIComponent(cursor)}`,
        owner.accessToken,
      ).expect(200);
      seen.push(...page.body.data.items);
      cursor = page.body.data.meta.nextCursor;
    }
    expect(seen.map((r) => r.to).sort()).toEqual([
      'a@example.net',
      'b@example.net',
      'c@example.net',
      'gone@bounce.example',
      'slow@example.org',
    ]);
    expect(seen.every((r) => r.companyUuid === owner.companyUuid)).toBe(true);
    const times = seen.map((r) => r.lastEventAt);
    expect([...times].sort().reverse()).toEqual(times);
    expect(first.body.data.items[0]).toEqual(
      expect.objectContaining({
        to: 'b@example.net',
        status: 'delivered',
        queueId: 'AA1A1A1A1',
        events: expect.any(Array),
      }),
    );

    const tampered = `${first.body.data.meta.nextCursor.slice(0, -2)}xx`;
    expectFailure(
      (await get(`/api/v1/reports/logs?${window()}&cursor=${tampered}`, owner.accessToken).expect(400)).body,
      400,
      /cursor/,
    );
    expectFailure(
      (await get(`/api/v1/reports/logs?${window()}&cursor=bm90LWEtY3Vyc29y`, owner.accessToken).expect(400))
        .body,
      400,
    );

    const filtered = await get(`/api/v1/reports/logs?${window()}&status=bounced`, owner.accessToken).expect(
      200,
    );
    expect(filtered.body.data.items.map((r: { to: string }) => r.to)).toEqual(['gone@bounce.example']);
    const searched = await get(`/api/v1/reports/logs?${window()}&search=SLOW`, owner.accessToken).expect(200);
    expect(searched.body.data.items.map((r: { to: string }) => r.to)).toEqual(['slow@example.org']);
    const byMessage = await get(
      `/api/v1/reports/logs?${window()}&messageId=%3CAA-1@acme.example%3E`,
      owner.accessToken,
    ).expect(200);
    expect(byMessage.body.data.meta.totalItems).toBe(4);
  });

  it('logs/:id: the record with its events; another company’s is a 404, a malformed id a 400', async () => {
    const mine = await logs.findOneByOrFail({ to: 'b@example.net', queueId: 'AA1A1A1A1' });
    const res = await get(`/api/v1/reports/logs/${mine.id}`, owner.accessToken).expect(200);
    expect(res.body.data).toMatchObject({
      id: mine.id,
      status: 'delivered',
      opened: true,
      remoteQueueId: 'AAR1',
    });
    expect(res.body.data.events.map((e: { status: string }) => e.status)).toEqual([
      'sent',
      'delivered',
      'opened',
    ]);
    const theirs = await logs.findOneByOrFail({ to: 'b@example.net', queueId: 'BB1A1A1A1' });
    expectFailure((await get(`/api/v1/reports/logs/${theirs.id}`, owner.accessToken).expect(404)).body, 404);
    expectFailure((await get('/api/v1/reports/logs/not-an-id', owner.accessToken).expect(400)).body, 400);
  });

  it('logs/export: CSV with a header row, the filter applied, formula cells defused', async () => {
    const res = await get(`/api/v1/reports/logs/export?${window()}`, owner.accessToken).expect(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toContain('delivery-logs.csv');
    const lines = res.text.trim().split('\n');
    expect(lines[0]).toBe(
      'id,last_event_at,first_seen_at,status,from,to,message_id,queue_id,dsn,response,relay,delay,size,attempts,opened,clicked,provider,bounce_type,bounce_category,bounce_rule',
    );
    expect(lines).toHaveLength(6);
    expect(lines.find((l) => l.includes('c@example.net'))).toContain(
      ",'=cmd|calc@other.example,c@example.net,",
    );
    const bounced = await get(
      `/api/v1/reports/logs/export?${window()}&status=bounced`,
      owner.accessToken,
    ).expect(200);
    expect(bounced.text.trim().split('\n')).toHaveLength(2);
  });

  it('domains and bounces', async () => {
    const domains = await get(`/api/v1/reports/domains?${window()}`, owner.accessToken).expect(200);
    expect(domains.body.data.items).toEqual([
      {
        domain: 'acme.example',
        counts: expect.objectContaining({ processed: 4, sent: 1, delivered: 1, bounced: 1, deferred: 1 }),
        rates: { delivery: 0.5, bounce: 0.25, complaint: 0 },
      },
      {
        domain: 'other.example',
        counts: expect.objectContaining({ processed: 1, sent: 1 }),
        rates: { delivery: 1, bounce: 0, complaint: 0 },
      },
    ]);
    const bounces = await get(`/api/v1/reports/bounces?${window()}`, owner.accessToken).expect(200);
    expect(bounces.body.data).toEqual({
      reasons: [{ dsn: '5.1.1', count: 1, example: 'host mx said: 550 5.1.1 No such user' }],
      domains: [{ domain: 'bounce.example', count: 1 }],
    });
  });

  it('admins: the platform, one company, and the per-company ranking', async () => {
    const all = await get(`/api/v1/admins/reports/summary?${window()}`, admin.accessToken).expect(200);
    expect(all.body.data.totals.processed).toBe(10);
    const one = await get(
      `/api/v1/admins/reports/summary?${window()}&companyUuid=${other.companyUuid}`,
      admin.accessToken,
    ).expect(200);
    expect(one.body.data.totals).toMatchObject({ processed: 5, sent: 3, delivered: 0 });
    const unknown = await get(
      `/api/v1/admins/reports/logs?${window()}&companyUuid=5f0c6f1e-8d3a-4a57-9a43-1b2c3d4e5f60`,
      admin.accessToken,
    ).expect(404);
    expectFailure(unknown.body, 404);
    const logsOfAll = await get(
      `/api/v1/admins/reports/logs?${window()}&limit=100`,
      admin.accessToken,
    ).expect(200);
    expect(logsOfAll.body.data.meta.totalItems).toBe(10);

    const ranking = await get(
      `/api/v1/admins/reports/companies?${window()}&sort=processed:desc`,
      admin.accessToken,
    ).expect(200);
    expect(ranking.body.data.items).toHaveLength(2);
    expect(ranking.body.data.items[0]).toMatchObject({
      counts: expect.objectContaining({ processed: 5 }),
      rates: { delivery: 0.6, bounce: 0.2, complaint: 0 },
      quota: { limit: 1000, used: 5, remaining: 995 },
    });
    expect(ranking.body.data.items.map((i: { companyUuid: string }) => i.companyUuid).sort()).toEqual(
      [owner.companyUuid, other.companyUuid].sort(),
    );
    // A user is not an admin.
    const refused = await get(`/api/v1/admins/reports/summary?${window()}`, owner.accessToken).expect(403);
    expectFailure(refused.body, 403);
  });
});
