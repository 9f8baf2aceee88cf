import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { CleanStatus } from '../../src/modules/log-index/clean-record';
import type { BenchDatabase } from './database';
import { analyze, type ServiceWatch } from './event-loop';
import { SeededDeliverability } from './seed-deliverability';
import { residentBytes, RssSampler, RunningService } from './service';

/** Columns of a seeded row. */
const SEED_COLUMNS = 23;
/** Rows per INSERT: 500 × 23 columns, well under SQLite's 32,766 bound parameters. */
const SEED_BATCH = 500;
/** Rows per transaction while seeding. */
const SEED_ROUND = 50_000;
const DAY = 86_400_000;
/** The phase in which the bench writes the clean records straight into the database. */
export const SEEDING_PHASE = 'seeding the clean records (the bench writes, the service idles)';

export interface DeliveryFigures extends SeededReports {
  ingestLinesPerSecond: number;
  ingestLines: number;
  providerEventsPerSecond: number;
  providerEvents: number;
  /** issue 21: events naming messages whose log lines have not arrived (a shipper that lags). */
  waitingEventsPerSecond: number;
  waitingEvents: number;
  /** Then those messages' log lines arrive: ingest that applies every waiting event. */
  matchingIngestLinesPerSecond: number;
  waitingEventsApplied: number;
  exportRows: number;
  exportSeconds: number;
  exportRssGrowthMb: number;
}

/** What the seeding decided with the service's classifier. */
export interface SeedSummary {
  /** Distinct replies and destinations classified by the service's `deliverabilityOf`. */
  classified: number;
  /** The bounce rules the seeded failures matched (each with a sample). */
  rules: string[];
}

export interface DeliveryBenchOptions {
  logShipperKey: string;
  webhookUser: string;
  webhookPassword: string;
  /** A user's bearer token: its company gets the seeded records. */
  token: string;
  seconds: number;
  records: number;
}

/**
 * issue 10's figures: log ingest in batches of 1,000 lines, provider events in batches of 100,
 * then, over `records` clean records of one company seeded straight into the database, the
 * 30-day summary, the first page of the log, and the CSV export's memory.
 */
export async function measureDeliveryData(
  service: RunningService,
  watch: ServiceWatch,
  db: BenchDatabase,
  o: DeliveryBenchOptions,
): Promise<DeliveryFigures> {
  const company = await companyOf(service, db, o.token);

  // Ingest: messages of five lines (client, message-id, from, to=, removed), two batches in flight.
  let message = 0;
  const batchOfLines = () => {
    const lines: string[] = [];
    const at = new Date().toISOString();
    for (let i = 0; i < 200; i++, message++) {
      const q = `B${message.toString(16).toUpperCase().padStart(9, '0')}`;
      lines.push(
        `${at} bench1 postfix/smtpd[1]: ${q}: client=h[10.0.0.1], sasl_method=PLAIN, sasl_username=${company.relayUsername}`,
        `${at} bench1 postfix/cleanup[2]: ${q}: message-id=<${q}@bench.example>`,
        `${at} bench1 postfix/qmgr[3]: ${q}: from=<news@bench.example>, size=2048, nrcpt=1 (queue active)`,
        `${at} bench1 postfix/smtp[4]: ${q}: to=<r${message}@example.net>, relay=mx[10.0.0.2]:25, delay=0.2, delays=0/0/0.1/0.1, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as R${q})`,
        `${at} bench1 postfix/qmgr[3]: ${q}: removed`,
      );
    }
    return lines.join('\n');
  };
  const postBatch = async () => {
    const res = await fetch(`${service.baseUrl}/api/v1/callback-raw-log`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'x-api-key': o.logShipperKey },
      body: batchOfLines(),
    });
    if (res.status !== 200) throw new Error(`callback-raw-log: ${res.status} ${await res.text()}`);
    return 1000;
  };
  /**
   * SendGrid `delivered` events of messages `first` to `first + count - 1`, in one post: queue ids
   * `<queuePrefix><n in hex>`, recipients `<recipientPrefix><n>@example.net`.
   */
  const postSendGridDeliveries = async (
    queuePrefix: string,
    recipientPrefix: string,
    first: number,
    count: number,
  ) => {
    const body = Array.from({ length: count }, (_, i) => {
      const n = first + i;
      const q = `${queuePrefix}${n.toString(16).toUpperCase().padStart(9, '0')}`;
      return {
        event: 'delivered',
        email: `${recipientPrefix}${n}@example.net`,
        timestamp: Math.floor(Date.now() / 1000),
        sg_message_id: `R${q}.filter0001`,
        sg_event_id: `bench-${q}`,
      };
    });
    const res = await fetch(`${service.baseUrl}/callback/mail-provider`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`${o.webhookUser}:${o.webhookPassword}`).toString('base64')}`,
      },
      body: JSON.stringify(body),
    });
    if (res.status !== 200) throw new Error(`callback/mail-provider: ${res.status} ${await res.text()}`);
    return count;
  };

  // Provider events: SendGrid `delivered` for the records ingested, matched on sg_message_id.
  let next = 0;
  const postEvents = () => {
    const count = Math.min(100, message - next);
    if (count <= 0) return Promise.resolve(0);
    next += count;
    return postSendGridDeliveries('B', 'r', next - count, count);
  };

  // A running relay's tables have planner statistics: autovacuum analyses a table within a
  // minute of its first rows. This run's tables are seconds old, and without statistics
  // PostgreSQL plans the lookups by key of a batch as scans; so a warm-up gives every table
  // rows, and they are analysed as autovacuum would.
  await forSeconds(1, 2, postBatch);
  for (let i = 0; i < 3; i++) await postEvents();
  await watch.mark('delivery data warm-up');
  await analyze(db, watch);
  const ingest = await forSeconds(o.seconds, 2, postBatch);
  await watch.mark('log ingest');
  const events = await forSeconds(o.seconds, 2, postEvents);
  await watch.mark('provider events');

  // Events before their messages (issue 21): SendGrid batches of 100 on 50 connections naming
  // messages whose log lines have not arrived, then those lines, which apply every one of them.
  let waiting = 0;
  const waitingKey = (n: number) => `W${n.toString(16).toUpperCase().padStart(9, '0')}`;
  const postWaiting = () => {
    waiting += 100;
    return postSendGridDeliveries('W', 'w', waiting - 100, 100);
  };
  const early = await forSeconds(o.seconds, 50, postWaiting);
  await watch.mark('provider events before their messages');
  let arrived = 0;
  const postArriving = async () => {
    if (arrived >= waiting) return 0;
    const lines: string[] = [];
    const at = new Date().toISOString();
    for (let i = 0; i < 200 && arrived < waiting; i++, arrived++) {
      const q = waitingKey(arrived);
      lines.push(
        `${at} bench1 postfix/smtpd[1]: ${q}: client=h[10.0.0.1], sasl_method=PLAIN, sasl_username=${company.relayUsername}`,
        `${at} bench1 postfix/cleanup[2]: ${q}: message-id=<${q}@bench.example>`,
        `${at} bench1 postfix/qmgr[3]: ${q}: from=<news@bench.example>, size=2048, nrcpt=1 (queue active)`,
        `${at} bench1 postfix/smtp[4]: ${q}: to=<w${arrived}@example.net>, relay=mx[10.0.0.2]:25, delay=0.2, delays=0/0/0.1/0.1, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as R${q})`,
        `${at} bench1 postfix/qmgr[3]: ${q}: removed`,
      );
    }
    const res = await fetch(`${service.baseUrl}/api/v1/callback-raw-log`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'x-api-key': o.logShipperKey },
      body: lines.join('\n'),
    });
    if (res.status !== 200) throw new Error(`callback-raw-log: ${res.status} ${await res.text()}`);
    return lines.length;
  };
  // Bounded like every run: the lines of the first messages whose events wait.
  const matching = await forSeconds(o.seconds, 2, postArriving);
  await watch.mark('log lines of messages whose events waited');
  const [{ n: applied }] = await db.query<{ n: number | string }>(
    "SELECT COUNT(*) AS n FROM provider_events WHERE event_key LIKE 'sendgrid:bench-W%' AND outcome = 'applied'",
    [],
  );
  if (Number(applied) !== Math.min(arrived, waiting)) {
    throw new Error(
      `waiting provider events: ${applied} applied of ${Math.min(arrived, waiting)} whose lines arrived`,
    );
  }

  const reports = await seedAndTimeReports(service, watch, db, {
    token: o.token,
    companyId: company.id,
    companyUuid: company.uuid,
    records: o.records,
  });

  // The export of every record: the service's memory before and at its peak while streaming.
  const before = residentBytes(service.pid) ?? 0;
  const rss = new RssSampler(service.pid, 50);
  rss.start();
  const exportStarted = performance.now();
  const res = await fetch(
    `${service.baseUrl}/api/v1/reports/logs/export?from=${reportDay(31)}&to=${reportDay(0)}`,
    {
      headers: { authorization: `Bearer ${o.token}` },
    },
  );
  let rows = -1;
  const reader = res.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    for (const byte of value) if (byte === 0x0a) rows++;
  }
  rss.stop();
  if (res.status !== 200) throw new Error(`export: ${res.status}`);
  await watch.mark('the export alone');

  return {
    ingestLinesPerSecond: ingest.units / ingest.seconds,
    ingestLines: ingest.units,
    providerEventsPerSecond: events.units / events.seconds,
    providerEvents: events.units,
    waitingEventsPerSecond: early.units / early.seconds,
    waitingEvents: early.units,
    matchingIngestLinesPerSecond: matching.units / matching.seconds,
    waitingEventsApplied: Number(applied),
    ...reports,
    exportRows: rows,
    exportSeconds: (performance.now() - exportStarted) / 1000,
    exportRssGrowthMb: Math.max(0, (rss.peak() ?? before) - before) / (1024 * 1024),
  };
}

/** `YYYY-MM-DD` (UTC) `offset` days ago: the reports' `from` and `to`. */
export const reportDay = (offset: number) => new Date(Date.now() - offset * DAY).toISOString().slice(0, 10);

/** The company of a user's token: its id and relay username in the database. */
export async function companyOf(service: RunningService, db: BenchDatabase, token: string) {
  const me = await getJson<{ company: { uuid: string } }>(service, '/api/v1/users/me', token);
  const [company] = await db.query<{ id: number; relay_username: string }>(
    'SELECT id, relay_username FROM companies WHERE uuid = ?',
    [me.company.uuid],
  );
  return { id: Number(company.id), uuid: me.company.uuid, relayUsername: company.relay_username };
}

export interface SeededReports {
  records: number;
  seedSeconds: number;
  seed: SeedSummary;
  summaryP95Ms: number;
  logsFirstPageP95Ms: number;
}

/**
 * quality.md's report rows: `records` clean records of the token's company seeded straight into
 * the database, then the 30-day summary and the log's first page, 30 requests each (p95).
 */
export async function seedAndTimeReports(
  service: RunningService,
  watch: ServiceWatch,
  db: BenchDatabase,
  o: { token: string; companyId: number; companyUuid: string; records: number },
): Promise<SeededReports> {
  const seedStarted = performance.now();
  const seed = await seedCleanLogs(db, o.companyId, o.companyUuid, o.records);
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  await watch.mark(SEEDING_PHASE);

  const day = reportDay;
  const summaryMs = await timings(30, () =>
    getJson(service, `/api/v1/reports/summary?from=${day(29)}&to=${day(0)}&interval=day`, o.token),
  );
  await watch.mark('reports summary');
  const logsMs = await timings(30, () =>
    getJson(service, `/api/v1/reports/logs?from=${day(29)}&to=${day(0)}&limit=50`, o.token),
  );
  await watch.mark('reports logs');
  return {
    records: o.records,
    seedSeconds,
    seed,
    summaryP95Ms: p95(summaryMs),
    logsFirstPageP95Ms: p95(logsMs),
  };
}

/**
 * The fast seeding of `count` clean records of one company over the last 30 days (statuses,
 * sender domains and opens spread as a real month's would be; recipients spread over the mailbox
 * providers, each failure with a provider's reply and the bounce class the service's rules give
 * it), their daily roll-up, their deliverability roll-up (`deliverability_hourly`) and the latest
 * reply of each bounce rule (`bounce_samples`), as the index's writes would have kept them.
 */
export async function seedCleanLogs(
  db: Pick<BenchDatabase, 'kind' | 'execute'>,
  companyId: number,
  companyUuid: string,
  count: number,
): Promise<SeedSummary> {
  const statuses: CleanStatus[] = [
    'sent',
    'sent',
    'sent',
    'sent',
    'delivered',
    'delivered',
    'deferred',
    'bounced',
    'rejected',
    'complained',
  ];
  const now = Date.now();
  const deliverability = new SeededDeliverability();
  /** Record 0 is the latest: the first record of a rule has its latest reply. */
  const samples = new Map<string, { response: string; at: Date }>();
  // better-sqlite3 binds no booleans: SQLite keeps them as 0/1.
  const bool = (value: boolean) => (db.kind === 'postgres' ? value : Number(value));
  for (let round = 0; round < count; round += SEED_ROUND) {
    const statements: Array<{ sql: string; params: unknown[] }> = [];
    for (let start = round; start < Math.min(round + SEED_ROUND, count); start += SEED_BATCH) {
      const rows: unknown[][] = [];
      for (let i = start; i < Math.min(start + SEED_BATCH, count); i++) {
        const last = new Date(now - (i % (30 * 24 * 60)) * 60_000 - 1000);
        const status = statuses[i % statuses.length];
        // Every sender domain sends every status to every provider, as a company's domains do
        // (i mod 5 gave each status one domain, and the hourly roll-up a fifth of its cells).
        const domain = `d${Math.floor(i / 7) % 5}.bench.example`;
        const queueId = `S${i.toString(16).toUpperCase().padStart(10, '0')}`;
        const o = deliverability.outcome(i, status);
        if (o.bounceRule && !samples.has(o.bounceRule))
          samples.set(o.bounceRule, { response: o.response.slice(0, 500), at: last });
        rows.push([
          createHash('sha256').update(`seed\n${companyUuid}\n${queueId}`).digest('hex'),
          companyId,
          companyUuid,
          'seed1',
          queueId,
          `${queueId}@${domain}`,
          `news@${domain}`,
          domain,
          o.recipient,
          status,
          o.dsn,
          o.response,
          o.relay,
          1,
          bool(i % 3 === 0),
          bool(i % 9 === 0),
          new Date(last.getTime() - 2000),
          last,
          '[]',
          o.provider,
          o.bounceType,
          o.bounceCategory,
          o.bounceRule,
        ]);
      }
      statements.push({
        sql:
          'INSERT INTO clean_logs (id, company_id, company_uuid, host, queue_id, message_id, sender, sender_domain, recipient, status, dsn, response, relay, attempts, opened, clicked, first_seen_at, last_event_at, events, provider, bounce_type, bounce_category, bounce_rule) VALUES ' +
          rows.map(() => `(${Array(SEED_COLUMNS).fill('?').join(', ')})`).join(', '),
        params: rows.flat(),
      });
    }
    await db.execute(statements);
  }
  const dayOf =
    db.kind === 'postgres'
      ? "to_char(last_event_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
      : 'substr(last_event_at, 1, 10)';
  // The roll-up's hour is `YYYY-MM-DDTHH` (UTC); SQLite keeps datetimes as 'YYYY-MM-DD HH:MM:SS.SSS'.
  const hourOf =
    db.kind === 'postgres'
      ? `to_char(last_event_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24')`
      : "replace(substr(last_event_at, 1, 13), ' ', 'T')";
  const flag = (column: string) => `SUM(CASE WHEN ${column} THEN 1 ELSE 0 END)`;
  // ON CONFLICT's SET names the table's own column unqualified on SQLite, qualified on PostgreSQL.
  const own = (column: string, table: string) => (db.kind === 'postgres' ? `${table}.${column}` : column);
  const cell = [
    'company_id',
    hourOf,
    "COALESCE(sender_domain, '')",
    'provider',
    'status',
    "COALESCE(bounce_type, '')",
    "COALESCE(bounce_category, '')",
    "COALESCE(bounce_rule, '')",
  ].join(', ');
  // The roll-ups of what was seeded, as the index's writes would have kept them.
  await db.execute([
    {
      sql:
        `INSERT INTO clean_log_daily (company_id, day, sender_domain, status, records, opened, clicked) ` +
        `SELECT company_id, ${dayOf}, sender_domain, status, COUNT(*), ${flag('opened')}, ${flag('clicked')} ` +
        `FROM clean_logs WHERE company_id = ? AND host = 'seed1' GROUP BY company_id, ${dayOf}, sender_domain, status ` +
        (db.kind === 'postgres'
          ? 'ON CONFLICT (company_id, day, sender_domain, status, shard) DO UPDATE SET records = clean_log_daily.records + excluded.records, opened = clean_log_daily.opened + excluded.opened, clicked = clean_log_daily.clicked + excluded.clicked'
          : 'ON CONFLICT (company_id, day, sender_domain, status, shard) DO UPDATE SET records = records + excluded.records, opened = opened + excluded.opened, clicked = clicked + excluded.clicked'),
      params: [companyId],
    },
    {
      sql:
        'INSERT INTO deliverability_hourly (company_id, hour, sender_domain, provider, status, bounce_type, bounce_category, bounce_rule, records) ' +
        `SELECT ${cell}, COUNT(*) FROM clean_logs WHERE company_id = ? AND host = 'seed1' GROUP BY ${cell} ` +
        'ON CONFLICT (company_id, hour, sender_domain, provider, status, bounce_type, bounce_category, bounce_rule, shard) ' +
        `DO UPDATE SET records = ${own('records', 'deliverability_hourly')} + excluded.records`,
      params: [companyId],
    },
    ...[...samples].map(([rule, sample]) => ({
      sql:
        'INSERT INTO bounce_samples (company_id, rule, response, "at") VALUES (?, ?, ?, ?) ' +
        'ON CONFLICT (company_id, rule, shard) DO UPDATE SET response = excluded.response, "at" = excluded."at"',
      params: [companyId, rule, sample.response, sample.at],
    })),
  ]);
  return { classified: deliverability.classified, rules: [...samples.keys()].sort() };
}

export async function getJson<T>(service: RunningService, path: string, token: string): Promise<T> {
  const res = await fetch(`${service.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { data: T }).data;
}

/** Runs `work` with `inFlight` calls at a time for about `seconds`; each call answers how many units it did. */
async function forSeconds(seconds: number, inFlight: number, work: () => Promise<number>) {
  const started = performance.now();
  const until = started + seconds * 1000;
  let units = 0;
  let done = false;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (!done && performance.now() < until) {
        const n = await work();
        if (n === 0) done = true;
        units += n;
      }
    }),
  );
  return { units, seconds: (performance.now() - started) / 1000 };
}

export async function timings(times: number, call: () => Promise<unknown>): Promise<number[]> {
  await call(); // warm-up
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    await call();
    ms.push(performance.now() - started);
  }
  return ms;
}

export function p95(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)];
}
