import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { BenchDatabase } from './database';
import { analyze, type ServiceWatch } from './event-loop';
import { commandCpuMicros, cpuMicros, machineCpuMicros, RssSampler, RunningService } from './service';

/** quality.md's fleet rows: 50 Postfix hosts shipping at once. */
export const FLEET_CONNECTIONS = Number(process.env.BENCH_FLEET_CONNECTIONS ?? 50);
/**
 * Service processes the fleet posts to, in turn (1, quality.md's rows: the service as a user runs
 * it): more shows what replicas on the same machine add.
 */
export const FLEET_REPLICAS = Math.max(1, Number(process.env.BENCH_FLEET_REPLICAS ?? 1));
/** Messages a batch: 125 × 8 lines = 1,000 lines. */
const MESSAGES_PER_BATCH = 125;
/** Of them, the busy company's; the rest are the connection's own company's. */
const BUSY_MESSAGES_PER_BATCH = 100;
/** A shipper gives up on a batch after 10 s (Fluent Bit's and Vector's usual request timeout) and retries it. */
export const BATCH_TIMEOUT_MS = 10_000;
/** Provider events a post. */
const EVENTS_PER_BATCH = 100;

export const BUDGET_FLEET_LINES_PER_SECOND = 20_000;
export const BUDGET_FLEET_LINES_PER_CEILING = 1.3;
export const BUDGET_FLEET_BATCH_P99_MS = 2_000;
export const BUDGET_FLEET_EVENTS_PER_SECOND = 5_000;
export const BUDGET_FLEET_EVENTS_PER_CEILING = 0.33;

/**
 * The rate a batch p99 needs at this concurrency, whatever the machine. Each connection posts its
 * next batch when the last is answered, so `connections × lines a batch` are always in flight and
 * a batch's mean time is that over the rate (Little's law). With at most 1 % of batches above the
 * p99 and none above BATCH_TIMEOUT_MS, the mean is at most `0.99 × p99 + 0.01 × timeout`: a p99
 * of 2 s at 50 × 1,000 lines needs ≥ 24,000 lines/s (2.08 s mean), above the 20,000 lines/s row.
 */
export function ratePerSecondForP99(p99Ms: number, connections: number, unitsPerBatch: number): number {
  const meanSeconds = (0.99 * p99Ms + 0.01 * BATCH_TIMEOUT_MS) / 1000;
  return (connections * unitsPerBatch) / meanSeconds;
}

/** Lines a log batch of the fleet run. */
export const LINES_PER_BATCH = MESSAGES_PER_BATCH * 8;

export interface FleetRun {
  /** Units (lines or events) answered 200, per second of the run. */
  perSecond: number;
  units: number;
  batches: number;
  /** Batches not answered 200 within BATCH_TIMEOUT_MS. */
  timeouts: number;
  /** Batches answered, but not 200 (a 503 asks the shipper to retry). */
  refused: number;
  latencyMs: { p50: number; p99: number; max: number };
  seconds: number;
  /** The service's CPU time (user + system, its replicas' too) per unit: steadier than the rate on a shared machine. */
  serviceCpuMicrosPerUnit: number | null;
  /** The same of this machine's `postgres` processes (the database, when it runs here). */
  postgresCpuMicrosPerUnit: number | null;
  /** How busy the whole machine was during the run (0–1, all its CPUs): whether it had any left. */
  machineBusy: number | null;
}

export interface FleetFigures {
  ingest: FleetRun;
  events: FleetRun;
  /** Provider hard bounces, each suppressing its recipient (information: quality.md's row is `events`). */
  bounces: FleetRun;
  /** Peak resident memory of the service during the two runs (sampled). */
  rssPeakMb: number | null;
}

export interface FleetOptions {
  db: Pick<BenchDatabase, 'execute'>;
  logShipperKey: string;
  webhookUser: string;
  webhookPassword: string;
  /** The busy company's relay username, then one company's per connection (cycled). */
  busyRelayUsername: string;
  relayUsernames: string[];
  seconds: number;
  warmupS: number;
  /** More processes of the service on the same database, posted to in turn with it (FLEET_REPLICAS). */
  replicas?: RunningService[];
}

/**
 * quality.md's ingest row as a relay's fleet produces it: 50 connections (one per Postfix host),
 * each posting 1,000-line batches of Fluent Bit records (`{ "logs": [{ "log": … }] }`), 125
 * messages × 8 lines of integrations.md's forms: the SASL client line, message-id, from, two
 * deliveries, a bounce or a deferral, a removal (or the deferral's retry), a `NOQUEUE: reject`.
 * Queue ids are new every batch; 100 of a batch's messages are the busy company's. Then the
 * provider events: SendGrid `delivered` events of the deliveries just ingested, 100 a post, on 50
 * connections; then for half as long their hard bounces (each suppresses its recipient). Each batch's latency is from its send to its answer; one not answered within 10 s
 * counts as a timeout, as the shipper would give up on it.
 */
export async function measureFleet(
  service: RunningService,
  watch: ServiceWatch,
  o: FleetOptions,
): Promise<FleetFigures> {
  const agent = new Agent({ keepAlive: true, maxSockets: FLEET_CONNECTIONS });
  const processes = [service, ...(o.replicas ?? [])];
  const urls = processes.map((p) => new URL(p.baseUrl));
  let posts = 0;
  const delivered: Array<{ recipient: string; remoteId: string }> = [];
  let sequence = 0;

  const ingestBatch = (connection: number): { body: string; units: number } => {
    const host = `relay-${connection + 1}.fleet.example`;
    const own = o.relayUsernames[connection % o.relayUsernames.length];
    const at = new Date().toISOString();
    const logs: Array<{ log: string }> = [];
    const line = (text: string) => logs.push({ log: `${at} ${host} ${text}` });
    for (let m = 0; m < MESSAGES_PER_BATCH; m++) {
      const n = sequence++;
      const q = n.toString(16).toUpperCase().padStart(10, '0');
      const user = m < BUSY_MESSAGES_PER_BATCH ? o.busyRelayUsername : own;
      const pid = 1000 + (n % 9000);
      line(
        `postfix/smtpd[${pid}]: ${q}: client=app${connection}.example[10.1.${connection}.7], sasl_method=PLAIN, sasl_username=${user}`,
      );
      line(`postfix/cleanup[${pid + 1}]: ${q}: message-id=<${q}.${n}@mail.fleet.example>`);
      line(`postfix/qmgr[77]: ${q}: from=<news@fleet.example>, size=4210, nrcpt=3 (queue active)`);
      for (const r of ['a', 'b']) {
        const recipient = `${r}${n}@example.net`;
        line(
          `postfix/smtp[${pid + 2}]: ${q}: to=<${recipient}>, relay=mx.example.net[192.0.2.25]:25, delay=0.9, delays=0.1/0/0.3/0.5, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as R${q}${r})`,
        );
        delivered.push({ recipient, remoteId: `R${q}${r}` });
      }
      if (n % 2 === 0) {
        line(
          `postfix/smtp[${pid + 3}]: ${q}: to=<c${n}@gmail.com>, relay=gmail-smtp-in.l.google.com[142.250.4.27]:25, delay=1.9, delays=0.1/0/0.5/1.3, dsn=5.1.1, status=bounced (host gmail-smtp-in.l.google.com[142.250.4.27] said: 550-5.1.1 The email account that you tried to reach does not exist. 550 5.1.1 https://support.google.com/mail/?p=NoSuchUser (in reply to RCPT TO command))`,
        );
        line(`postfix/qmgr[77]: ${q}: removed`);
      } else {
        for (const delay of ['2.3', '301']) {
          line(
            `postfix/smtp[${pid + 3}]: ${q}: to=<c${n}@example.org>, relay=mx.example.org[192.0.2.26]:25, delay=${delay}, delays=0.1/0/1/1.2, dsn=4.2.0, status=deferred (host mx.example.org[192.0.2.26] said: 450 4.2.0 <c${n}@example.org>: Recipient address rejected: Greylisted)`,
          );
        }
      }
      line(
        `postfix/smtpd[${pid}]: NOQUEUE: reject: RCPT from unknown[198.51.100.${n % 250}]: 554 5.7.1 <x${n}@example.com>: Relay access denied; from=<spam${n}@example.biz> to=<x${n}@example.com> proto=ESMTP helo=<spam>`,
      );
    }
    return { body: JSON.stringify({ logs }), units: logs.length };
  };

  /**
   * SendGrid posts of 100 events, one for each delivered recipient in turn (each kind of event
   * walks the recipients on its own), until they run out.
   */
  const sendgridBatches = (event: (d: { recipient: string; remoteId: string }, now: number) => object) => {
    let sent = 0;
    return (): { body: string; units: number } | null => {
      if (delivered.length - sent < EVENTS_PER_BATCH) return null;
      const now = Math.floor(Date.now() / 1000);
      const events = delivered.slice(sent, sent + EVENTS_PER_BATCH).map((d) => event(d, now));
      sent += EVENTS_PER_BATCH;
      return { body: JSON.stringify(events), units: EVENTS_PER_BATCH };
    };
  };
  const eventsBatch = sendgridBatches((d, now) => ({
    event: 'delivered',
    email: d.recipient,
    timestamp: now,
    sg_message_id: `${d.remoteId}.filter0001`,
    sg_event_id: `fleet-${d.remoteId}`,
  }));
  /** Hard bounces of the delivered recipients (after their deliveries), each suppressing its recipient. */
  const bouncesBatch = sendgridBatches((d, now) => ({
    event: 'bounce',
    type: 'bounce',
    email: d.recipient,
    timestamp: now,
    status: '5.1.1',
    reason: `550 5.1.1 <${d.recipient}>: Recipient address rejected: User unknown in virtual mailbox table`,
    sg_message_id: `${d.remoteId}.filter0001`,
    sg_event_id: `fleet-bounce-${d.remoteId}`,
  }));

  const post = (path: string, headers: Record<string, string>, body: string) =>
    new Promise<{ status: number | 'timeout' }>((resolve) => {
      const url = urls[posts++ % urls.length];
      const req = request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          path,
          method: 'POST',
          headers: { ...headers, 'content-length': Buffer.byteLength(body) },
          timeout: BATCH_TIMEOUT_MS,
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
        },
      );
      req.on('timeout', () => {
        req.destroy();
        resolve({ status: 'timeout' });
      });
      req.on('error', () => resolve({ status: 'timeout' }));
      req.end(body);
    });

  const run = async (
    seconds: number,
    path: string,
    headers: Record<string, string>,
    next: (connection: number) => { body: string; units: number } | null,
  ): Promise<FleetRun> => {
    const started = performance.now();
    const serviceCpu = () => {
      const each = processes.map((p) => cpuMicros(p.pid));
      return each.includes(undefined) ? undefined : (each as number[]).reduce((a, b) => a + b, 0);
    };
    const cpuBefore = serviceCpu();
    const postgresBefore = commandCpuMicros('postgres');
    const machineBefore = machineCpuMicros();
    const until = started + seconds * 1000;
    const latencies: number[] = [];
    let units = 0;
    let timeouts = 0;
    let refused = 0;
    await Promise.all(
      Array.from({ length: FLEET_CONNECTIONS }, async (_, connection) => {
        while (performance.now() < until) {
          const batch = next(connection);
          if (!batch) return;
          const sent = performance.now();
          const { status } = await post(path, headers, batch.body);
          latencies.push(performance.now() - sent);
          if (status === 'timeout') timeouts++;
          else if (status !== 200) refused++;
          else units += batch.units;
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    const cpuAfter = serviceCpu();
    const postgresAfter = commandCpuMicros('postgres');
    const machineAfter = machineCpuMicros();
    latencies.sort((a, b) => a - b);
    const at = (q: number) =>
      latencies[Math.min(latencies.length - 1, Math.ceil(latencies.length * q) - 1)] ?? 0;
    return {
      perSecond: units / elapsed,
      units,
      batches: latencies.length,
      timeouts,
      refused,
      latencyMs: { p50: at(0.5), p99: at(0.99), max: latencies[latencies.length - 1] ?? 0 },
      seconds: elapsed,
      serviceCpuMicrosPerUnit:
        cpuBefore === undefined || cpuAfter === undefined || !units ? null : (cpuAfter - cpuBefore) / units,
      postgresCpuMicrosPerUnit: units ? (postgresAfter - postgresBefore) / units : null,
      machineBusy:
        machineBefore && machineAfter && machineAfter.total > machineBefore.total
          ? (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)
          : null,
    };
  };

  const shipper = { 'content-type': 'application/json', 'x-api-key': o.logShipperKey };
  const provider = {
    'content-type': 'application/json',
    authorization: `Basic ${Buffer.from(`${o.webhookUser}:${o.webhookPassword}`).toString('base64')}`,
  };
  const rss = new RssSampler(service.pid, 50);
  rss.start();
  try {
    await run(o.warmupS, '/api/v1/callback-raw-log', shipper, ingestBatch);
    await run(o.warmupS / 2, '/callback/mail-provider', provider, eventsBatch);
    // As in measureDeliveryData: a running relay's tables have the statistics autovacuum's
    // analyse gives them within a minute of their first rows; these are seconds old.
    await watch.mark('fleet warm-up (ingest, provider events)');
    await analyze(o.db, watch);
    const ingest = await run(o.seconds, '/api/v1/callback-raw-log', shipper, ingestBatch);
    await watch.mark(`log ingest, ${FLEET_CONNECTIONS} hosts at once`);
    const events = await run(o.seconds, '/callback/mail-provider', provider, eventsBatch);
    await watch.mark(`provider events, ${FLEET_CONNECTIONS} connections`);
    const bounces = await run(o.seconds / 2, '/callback/mail-provider', provider, bouncesBatch);
    await watch.mark(`provider hard bounces, ${FLEET_CONNECTIONS} connections`);
    return {
      ingest,
      events,
      bounces,
      rssPeakMb: rss.peak() === undefined ? null : rss.peak()! / (1024 * 1024),
    };
  } finally {
    rss.stop();
    agent.destroy();
  }
}
