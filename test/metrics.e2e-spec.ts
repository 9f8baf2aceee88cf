import { INestApplicationContext } from '@nestjs/common';
import { parser as promqlParser } from '@prometheus-io/lezer-promql';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeliveryRecordsService } from '../src/modules/delivery/delivery-records.service';
import { RunningRelayAgent, startRelayAgent } from '../src/relay-agent/relay-agent';
import { PostfixMilterClient } from './support/relay-agent/postfix-milter-client';
import { MAX_FAILURES } from '../src/relay-agent/sasl/relay-authenticator';
import { SaslTestClient } from './support/relay-agent/sasl-test-client';
import { bearer, createActiveUser, createAdmin, createPaidCompany, expectFailure } from './support/factories';
import { relayAgentApplication } from './support/relay-agent-app';
import { createTestApp, TestApp } from './support/test-app';

/**
 * GET /metrics (issue 23): the Prometheus text format on the API and on the relay agent's HTTP
 * listener, readable with METRICS_TOKEN or, while it is unset, from loopback only. Every scrape
 * is parsed as the exposition format; traffic must move the series it stands for. The counters
 * belong to the process (other apps of this file move them too), so each check reads a delta
 * between two scrapes around one action.
 */

const TOKEN = 'metrics-token-for-tests-0123456789abcdef';
const INTERNAL_KEY = 'internal-key-for-metrics-0123456789';
const SHIPPER_KEY = 'log-shipper-key-for-metrics-0123456789';
const WEBHOOK_USER = 'provider';
const WEBHOOK_PASSWORD = 'provider-webhook-password-0123456789';

/** One sample: the metric's name, its labels, its value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: -?\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/y;
const SUFFIXES = ['_bucket', '_count', '_sum', '_total', '_created', ''];

/**
 * The text exposition format 0.0.4, strictly: `# HELP`/`# TYPE` lines, then samples of a family
 * whose TYPE came first, labels quoted and escaped, values numbers (or Inf, NaN). Throws on the
 * first line that is none of these.
 */
function parseExposition(text: string): { samples: Sample[]; types: Map<string, string> } {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const [, keyword, name, rest] = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line) ?? [];
      if (!keyword || !METRIC_NAME.test(name)) throw new Error(`Not a comment of the format: ${line}`);
      if (keyword === 'TYPE') {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest))
          throw new Error(`Unknown type: ${line}`);
        if (types.has(name)) throw new Error(`Family typed twice: ${name}`);
        types.set(name, rest);
      }
      continue;
    }
    const match = SAMPLE_LINE.exec(line);
    if (!match) throw new Error(`Not a sample line: ${line}`);
    const [, name, labelText, raw] = match;
    const family = SUFFIXES.map((s) => (s && name.endsWith(s) ? name.slice(0, -s.length) : name)).find((f) =>
      types.has(f),
    );
    if (!family) throw new Error(`Sample before (or without) its TYPE: ${line}`);
    const labels: Record<string, string> = {};
    if (labelText) {
      LABEL.lastIndex = 0;
      while (LABEL.lastIndex < labelText.length) {
        const label = LABEL.exec(labelText);
        if (!label) throw new Error(`Bad labels: ${line}`);
        labels[label[1]] = label[2].replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
      }
    }
    // Prometheus reads a value with Go's ParseFloat, which takes Inf and NaN in any case
    // (prom-client writes NaN as `Nan`: the event-loop mean before its first sample).
    const value = /^[+-]?inf$/i.test(raw) ? (raw.startsWith('-') ? -Infinity : Infinity) : Number(raw);
    if (Number.isNaN(value) && !/^nan$/i.test(raw)) throw new Error(`Not a number: ${line}`);
    samples.push({ name, labels, value });
  }
  return { samples, types };
}

/** A parsed scrape: the value of a series (0 when absent, as for a counter not moved yet). */
class Scrape {
  constructor(
    readonly text: string,
    readonly samples: Sample[],
    /** Each family's TYPE: listed even while a labelled counter has no sample yet. */
    readonly types: Map<string, string>,
  ) {}

  /** Whether `name` is a family of this exposition or one of its series (`_bucket`, `_count`, …). */
  declares(name: string): boolean {
    return SUFFIXES.some(
      (suffix) => name.endsWith(suffix) && this.types.has(name.slice(0, name.length - suffix.length)),
    );
  }

  value(name: string, labels: Record<string, string> = {}): number {
    const found = this.find(name, labels);
    return found ? found.value : 0;
  }

  find(name: string, labels: Record<string, string> = {}): Sample | undefined {
    return this.samples.find(
      (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
    );
  }
}

const parse = (text: string) => {
  const { samples, types } = parseExposition(text);
  return new Scrape(text, samples, types);
};

interface DashboardPanel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { type: string; uid: string };
  targets?: Array<{ expr: string; refId: string; datasource: { type: string; uid: string } }>;
}

/** The series of issue 23 the dashboard must chart. */
const CHARTED = [
  'http_request_duration_seconds_count',
  'http_request_duration_seconds_bucket',
  'relay_decisions_total',
  'smtp_auth_attempts_total',
  'smtp_auth_blocked_addresses_total',
  'milter_messages_total',
  'log_lines_ingested_total',
  'log_records_ingested_total',
  'provider_events_total',
  'inbound_events_unapplied',
  'job_runs_total',
  'db_pool_connections_in_use',
  'db_pool_waiting_requests',
  'nodejs_eventloop_lag_p99_seconds',
  'process_resident_memory_bytes',
];

/** Whether lezer-promql (Prometheus's own UI grammar) parses `expr` without an error node. */
function isPromQl(expr: string): boolean {
  let valid = true;
  promqlParser.parse(expr).iterate({
    enter: (node) => {
      if (node.type.isError) valid = false;
    },
  });
  return valid;
}

/** One message of `relayUsername` to two recipients, handed to the next hop (`queued as <remote>`). */
function messageLines(relayUsername: string, q: string, remote: string, messageId: string): string {
  return [
    `Nov 21 18:58:30 relay1 postfix/smtpd[1]: ${q}: client=h[1.2.3.4], sasl_method=PLAIN, sasl_username=${relayUsername}`,
    `Nov 21 18:58:30 relay1 postfix/cleanup[2]: ${q}: message-id=<${messageId}>`,
    `Nov 21 18:58:31 relay1 postfix/qmgr[3]: ${q}: from=<news@acme.example>, size=920, nrcpt=2 (queue active)`,
    `Nov 21 18:58:35 relay1 postfix/smtp[4]: ${q}: to=<jo@example.net>, relay=smtp.provider.example[10.0.0.9]:587, delay=1, delays=0/0/0/1, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as ${remote})`,
    `Nov 21 18:58:35 relay1 postfix/smtp[4]: ${q}: to=<ann@example.org>, relay=smtp.provider.example[10.0.0.9]:587, delay=1, delays=0/0/0/1, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as ${remote})`,
  ].join('\n');
}

describe('GET /metrics on the API, with METRICS_TOKEN set', () => {
  let t: TestApp;

  const scrape = async (): Promise<Scrape> => {
    const res = await t.http().get('/metrics').set('authorization', `Bearer ${TOKEN}`).expect(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    return parse(res.text);
  };
  const requestCount = (s: Scrape, method: string, route: string, status: number) =>
    s.value('http_request_duration_seconds_count', { method, route, status: String(status) });
  const shipLog = (text: string) =>
    t
      .http()
      .post('/api/v1/callback-raw-log')
      .set('x-api-key', SHIPPER_KEY)
      .set('content-type', 'text/plain')
      .send(text);
  const sendEvents = (body: unknown) =>
    t
      .http()
      .post('/callback/mail-provider')
      .auth(WEBHOOK_USER, WEBHOOK_PASSWORD)
      .send(body as object);

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        METRICS_TOKEN: TOKEN,
        INTERNAL_API_KEY: INTERNAL_KEY,
        LOG_SHIPPER_API_KEY: SHIPPER_KEY,
        MAIL_PROVIDER_WEBHOOK_USER: WEBHOOK_USER,
        MAIL_PROVIDER_WEBHOOK_PASSWORD: WEBHOOK_PASSWORD,
      },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses a request without the token, or with another, with a 401 envelope (from loopback too)', async () => {
    const bare = await t.http().get('/metrics').expect(401);
    expectFailure(bare.body, 401, 'Missing or invalid metrics token');
    const wrong = await t.http().get('/metrics').set('authorization', `Bearer ${TOKEN}x`).expect(401);
    expectFailure(wrong.body, 401, 'Missing or invalid metrics token');
    const asHeader = await t.http().get('/metrics').set('x-api-key', TOKEN).expect(401);
    expectFailure(asHeader.body, 401, 'Missing or invalid metrics token');
  });

  it('answers the text format, not an envelope: process, event loop, pool and inbound series present', async () => {
    const s = await scrape();
    expect(s.text.startsWith('{')).toBe(false);
    expect(s.value('process_resident_memory_bytes')).toBeGreaterThan(10_000_000);
    expect(s.value('nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(s.find('nodejs_eventloop_lag_p99_seconds')).toBeDefined();
    expect(s.find('db_pool_connections_in_use')).toBeDefined();
    expect(s.find('db_pool_waiting_requests')).toBeDefined();
    if (t.dataSource.options.type === 'postgres') {
      // A connection checked out of pg's pool shows while it is held.
      const runner = t.dataSource.createQueryRunner();
      await runner.connect();
      try {
        expect((await scrape()).value('db_pool_connections_in_use')).toBeGreaterThanOrEqual(1);
      } finally {
        await runner.release();
      }
    } else {
      // SQLite has no pool: one in-process connection.
      expect(s.value('db_pool_connections_in_use')).toBe(0);
    }
    for (const source of ['payment_events', 'log_batches', 'provider_events']) {
      expect([source, s.value('inbound_events_unapplied', { source })]).toEqual([source, 0]);
    }
  });

  it('counts requests by route pattern and status, never by path, with their latency', async () => {
    const owner = await createActiveUser(t);
    const before = await scrape();
    const pattern = '/api/v1/companies/:companyUuid';
    await t
      .http()
      .get(`/api/v1/companies/${owner.companyUuid}`)
      .set(...bearer(owner.accessToken))
      .expect(200);
    await t.http().get(`/api/v1/companies/${owner.companyUuid}`).expect(401);
    await t.http().get(`/no/such/path/${owner.companyUuid}`).expect(404);
    const after = await scrape();

    expect(requestCount(after, 'GET', pattern, 200) - requestCount(before, 'GET', pattern, 200)).toBe(1);
    expect(requestCount(after, 'GET', pattern, 401) - requestCount(before, 'GET', pattern, 401)).toBe(1);
    expect(requestCount(after, 'GET', 'unmatched', 404) - requestCount(before, 'GET', 'unmatched', 404)).toBe(
      1,
    );
    // The latency histogram of the same series: the +Inf bucket is the count, the sum moved.
    const labels = { method: 'GET', route: pattern, status: '200' };
    expect(after.value('http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(
      requestCount(after, 'GET', pattern, 200),
    );
    expect(after.value('http_request_duration_seconds_sum', labels)).toBeGreaterThan(
      before.value('http_request_duration_seconds_sum', labels),
    );
    // The scrapes themselves are requests of the pattern /metrics.
    expect(requestCount(after, 'GET', '/metrics', 200)).toBeGreaterThanOrEqual(1);
    // No path, and so no token or id of a path, ever becomes a label.
    expect(after.text).not.toContain(owner.companyUuid);
    expect(after.text).not.toContain('/no/such/path');
  });

  it('counts relay decisions by Postfix action and reason', async () => {
    const before = await scrape();
    const res = await t
      .http()
      .post('/api/internal/relay-status')
      .set('x-api-key', INTERNAL_KEY)
      .send({ relayUsername: 'r-nobody42', sender: 'news@acme.example' })
      .expect(200);
    expect(res.body.data).toMatchObject({ allowed: false, action: 'REJECT unknown account' });
    const after = await scrape();
    const labels = { action: 'REJECT', reason: 'unknown account' };
    expect(after.value('relay_decisions_total', labels) - before.value('relay_decisions_total', labels)).toBe(
      1,
    );
  });

  it('counts the lines (parsed, skipped) and records of an applied log batch, and the provider events by type', async () => {
    const company = await createPaidCompany(t);
    const before = await scrape();
    const lines = `${messageLines(company.relayUsername, 'MET0000001', 'PM-M001', 'met1@acme.example')}\nnot a postfix line`;
    const shipped = await shipLog(lines).expect(200);
    expect(shipped.body.data).toEqual({ accepted: 6, parsed: 5, skipped: 1, records: 2 });
    // The same batch again is a copy: stored once, counted once.
    await shipLog(lines).expect(200);
    const delivered = await sendEvents({
      RecordType: 'Delivery',
      MessageID: 'PM-M001',
      Recipient: 'jo@example.net',
      DeliveredAt: '2026-11-21T18:59:00Z',
      Details: 'Test delivery',
    }).expect(200);
    expect(delivered.body.data).toEqual({ accepted: 1, duplicates: 0, skipped: 0 });
    const after = await scrape();

    const delta = (name: string, labels: Record<string, string> = {}) =>
      after.value(name, labels) - before.value(name, labels);
    expect(delta('log_lines_ingested_total', { result: 'parsed' })).toBe(5);
    expect(delta('log_lines_ingested_total', { result: 'skipped' })).toBe(1);
    expect(delta('log_records_ingested_total')).toBe(2);
    expect(delta('provider_events_total', { type: 'delivered' })).toBe(1);
    expect(
      delta('http_request_duration_seconds_count', { route: '/api/v1/callback-raw-log', status: '200' }),
    ).toBe(2);
  });

  it('shows events stored but not applied (a failed apply) until a redelivery applies them', async () => {
    const event = {
      event: 'delivered',
      email: 'jo@example.net',
      timestamp: 1763751600,
      sg_message_id: 'MET-9999.f',
      sg_event_id: 'metrics-unapplied-1',
    };
    const before = await scrape();
    const unapplied = (s: Scrape) => s.value('inbound_events_unapplied', { source: 'provider_events' });
    const spy = jest
      .spyOn(t.app.get(DeliveryRecordsService), 'rebuild')
      .mockRejectedValueOnce(new Error('lock timeout'));
    try {
      const res = await sendEvents([event]).expect(503);
      expectFailure(res.body, 503, 'Mail-provider events stored but not applied yet; retry later');
    } finally {
      spy.mockRestore();
    }
    const failed = await scrape();
    expect(unapplied(failed)).toBe(unapplied(before) + 1);
    expect(failed.value('provider_events_total', { type: 'delivered' })).toBe(
      before.value('provider_events_total', { type: 'delivered' }),
    );

    await sendEvents([event]).expect(200);
    const applied = await scrape();
    expect(unapplied(applied)).toBe(unapplied(before));
    expect(applied.value('provider_events_total', { type: 'delivered' })).toBe(
      before.value('provider_events_total', { type: 'delivered' }) + 1,
    );
  });

  it('counts job runs by job and result', async () => {
    const superAdmin = await createAdmin(t, 'superAdmin');
    const labels = { job: 'retry-callbacks', result: 'ok' };
    const before = await scrape();
    await t
      .http()
      .get('/api/v1/t3st-job?job=retry-callbacks')
      .set(...bearer(superAdmin.accessToken))
      .expect(200);
    const after = await scrape();
    expect(after.value('job_runs_total', labels) - before.value('job_runs_total', labels)).toBe(1);
    expect(after.value('job_runs_total', { job: 'retry-callbacks', result: 'failed' })).toBe(
      before.value('job_runs_total', { job: 'retry-callbacks', result: 'failed' }),
    );
  });
});

describe('ops/grafana-dashboard.json', () => {
  const dashboard = JSON.parse(
    readFileSync(join(__dirname, '..', 'ops', 'grafana-dashboard.json'), 'utf8'),
  ) as {
    uid: string;
    title: string;
    schemaVersion: number;
    templating: { list: Array<{ name: string; type: string }> };
    panels: DashboardPanel[];
  };
  const charts = dashboard.panels.filter((p) => p.type !== 'row');
  const exprs = charts.flatMap((p) => (p.targets ?? []).map((target) => target.expr));
  /** Metric names of the selectors (every selector names its metric and filters on `$job`). */
  const chartedNames = new Set(
    exprs.flatMap((e) => [...e.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{job=~"\$job"/g)].map((m) => m[1])),
  );

  it('is a Grafana dashboard: uid, schema version, a Prometheus data-source variable, panels with ids, places and queries', () => {
    expect(dashboard).toMatchObject({ uid: 'email-relay-service', schemaVersion: expect.any(Number) });
    expect(dashboard.templating.list).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'datasource', type: 'datasource' })]),
    );
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of dashboard.panels) {
      expect([panel.title, ['row', 'timeseries', 'stat'].includes(panel.type)]).toEqual([panel.title, true]);
      const { x, y, w, h } = panel.gridPos;
      expect([panel.title, x >= 0 && x + w <= 24 && y >= 0 && h > 0]).toEqual([panel.title, true]);
    }
    for (const panel of charts) {
      expect([panel.title, panel.datasource?.uid, panel.targets?.length]).toEqual([
        panel.title,
        '${datasource}',
        expect.any(Number),
      ]);
      const refIds = panel.targets!.map((target) => target.refId);
      expect(new Set(refIds).size).toBe(refIds.length);
    }
  });

  it('has valid PromQL in every query, and charts every series of the issue', () => {
    expect(exprs.filter((e) => !isPromQl(e))).toEqual([]);
    // The grammar does catch a broken query.
    expect(isPromQl('sum(rate(http_request_duration_seconds_count[5m])')).toBe(false);
    expect(CHARTED.filter((name) => !chartedNames.has(name))).toEqual([]);
  });

  it('charts only series that /metrics of the API or the relay agent declares', async () => {
    const t = await createTestApp({ smtp: false, env: { METRICS_TOKEN: undefined } });
    try {
      const s = parse((await t.http().get('/metrics').expect(200)).text);
      expect([...chartedNames].filter((name) => !s.declares(name))).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

describe('GET /metrics on the API, METRICS_TOKEN unset: loopback only', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ smtp: false, env: { METRICS_TOKEN: undefined } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers a peer on loopback without a credential', async () => {
    const res = await t.http().get('/metrics').expect(200);
    expect(parse(res.text).value('process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('refuses any other peer with 403, and a loopback request a proxy forwarded', async () => {
    const fastify = t.app.getHttpAdapter().getInstance();
    const remote = await fastify.inject({ method: 'GET', url: '/metrics', remoteAddress: '203.0.113.7' });
    expect(remote.statusCode).toBe(403);
    expectFailure(remote.json(), 403, 'Metrics are served to loopback only while METRICS_TOKEN is unset');
    // What X-Forwarded-For says is never the peer, and its presence means a proxy in between.
    const forwarded = await t.http().get('/metrics').set('x-forwarded-for', '127.0.0.1').expect(403);
    expectFailure(forwarded.body, 403, 'Metrics are served to loopback only while METRICS_TOKEN is unset');
    const local = await fastify.inject({ method: 'GET', url: '/metrics', remoteAddress: '::ffff:127.0.0.1' });
    expect(local.statusCode).toBe(200);
  });
});

describe('The relay agent: /health and /metrics on AGENT_HTTP_PORT', () => {
  let t: TestApp;
  let agentApp: INestApplicationContext;
  let agent: RunningRelayAgent;
  const clients: SaslTestClient[] = [];
  let base: string;

  const get = (path: string, token?: string) =>
    fetch(`${base}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  const scrape = async (): Promise<Scrape> => {
    const res = await get('/metrics', TOKEN);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    return parse(await res.text());
  };
  const auth = (s: Scrape, result: string) => s.value('smtp_auth_attempts_total', { result });

  beforeAll(async () => {
    t = await createTestApp();
    agentApp = await relayAgentApplication(t, { METRICS_TOKEN: TOKEN });
    agent = await startRelayAgent(agentApp, '127.0.0.1', {
      policy: 0,
      sasl: 'any',
      milter: 'any',
      http: 'any',
    });
    base = `http://127.0.0.1:${agent.ports.http}`;
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await agent?.close();
    await agentApp?.close();
    await t?.close();
  });

  async function connect(): Promise<SaslTestClient> {
    const c = await SaslTestClient.connect(agent.ports.sasl!);
    clients.push(c);
    await c.handshake();
    return c;
  }

  it('answers /health with the envelope while the database answers, and 404 elsewhere', async () => {
    const health = await get('/health');
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({
      status: 'success',
      code: 200,
      msg: 'Relay agent is healthy',
      data: { status: 'ok', checks: { database: 'up' } },
    });
    const other = await get('/metrics/other');
    expect(other.status).toBe(404);
    expectFailure(await other.json(), 404, 'Not found');
  });

  it('holds /metrics to the token', async () => {
    const bare = await get('/metrics');
    expect(bare.status).toBe(401);
    expectFailure(await bare.json(), 401, 'Missing or invalid metrics token');
    expect((await get('/metrics', `${TOKEN}x`)).status).toBe(401);
  });

  it('counts SMTP AUTH successes, failures, refusals of a blocked address and the addresses blocked', async () => {
    const owner = await createActiveUser(t);
    const issued = await t
      .http()
      .post(`/api/v1/companies/${owner.companyUuid}/relay-password`)
      .set(...bearer(owner.accessToken))
      .expect(200);
    const { relayUsername, relayPassword } = issued.body.data as {
      relayUsername: string;
      relayPassword: string;
    };
    const c = await connect();

    const before = await scrape();
    expect(await c.plain(relayUsername, relayPassword, { rip: '198.18.7.1' })).toMatch(/^OK\t/);
    expect(await c.plain(relayUsername, `${relayPassword}x`, { rip: '198.18.7.1' })).toMatch(/^FAIL\t/);
    const once = await scrape();
    expect(auth(once, 'success') - auth(before, 'success')).toBe(1);
    expect(auth(once, 'failure') - auth(before, 'failure')).toBe(1);

    // An address of its own fails up to the limit, then is refused unchecked.
    for (let i = 0; i < MAX_FAILURES; i++) {
      expect(await c.plain(relayUsername, `wrong-${i}`, { rip: '198.18.7.2' })).toMatch(/^FAIL\t/);
    }
    expect(await c.plain(relayUsername, relayPassword, { rip: '198.18.7.2' })).toMatch(/^FAIL\t/);
    const blocked = await scrape();
    expect(auth(blocked, 'failure') - auth(once, 'failure')).toBe(MAX_FAILURES);
    expect(auth(blocked, 'blocked') - auth(once, 'blocked')).toBe(1);
    expect(
      blocked.value('smtp_auth_blocked_addresses_total') - once.value('smtp_auth_blocked_addresses_total'),
    ).toBe(1);
    expect(auth(blocked, 'success')).toBe(auth(once, 'success'));
    // The agent's own exposition carries the process series as the API's does.
    expect(blocked.value('process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(blocked.text).not.toContain(relayUsername);
  });

  it('counts the messages the milter refuses, by reason', async () => {
    // A paid company the agent knows by its relay username, without the domain its From: names.
    const sender = await createPaidCompany(t);
    const refusal = async (headers: Array<[string, string]>, authUser: string = sender.relayUsername) => {
      const client = await PostfixMilterClient.open(agent.ports.milter!);
      try {
        await client.negotiate();
        await client.connectEvent();
        const replies = await client.message({
          mailFrom: '<news@acme.example>',
          authUser,
          headers,
          body: 'hi\r\n',
        });
        return replies[replies.length - 1].data.toString('latin1').replace(/\0+$/, '');
      } finally {
        client.close();
      }
    };
    const refused = (s: Scrape, reason: string) =>
      s.value('milter_messages_total', { outcome: 'refused', reason });
    const before = await scrape();
    expect(await refusal([['From', 'News <news@acme.example>']])).toMatch(
      /^550 5\.7\.1 From domain acme\.example/,
    );
    expect(
      await refusal([
        ['From', 'news@acme.example'],
        ['From', 'other@acme.example'],
      ]),
    ).toMatch(/^550 5\.6\.0 Message has 2 From headers/);
    expect(await refusal([['From', 'news@acme.example']], 'r-nobody77')).toBe(
      '550 5.7.1 Authentication required',
    );
    expect(await refusal([['From', '"ceo@bank.example" <news@acme.example>']])).toBe(
      '550 5.7.1 From display name names another address',
    );
    const after = await scrape();
    expect(refused(after, 'from_domain_not_verified') - refused(before, 'from_domain_not_verified')).toBe(1);
    expect(refused(after, 'from_header_count') - refused(before, 'from_header_count')).toBe(1);
    expect(refused(after, 'not_authenticated') - refused(before, 'not_authenticated')).toBe(1);
    expect(refused(after, 'from_display_name') - refused(before, 'from_display_name')).toBe(1);
    expect(after.value('milter_messages_total', { outcome: 'signed' })).toBe(
      before.value('milter_messages_total', { outcome: 'signed' }),
    );
  });
});
