import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';
import type { BenchDatabase } from './database';
import { analyze, type ServiceWatch } from './event-loop';
import { call, cpuMicros, RunningService, sleep } from './service';

/** quality.md: 50 endpoints. */
const WEBHOOK_ENDPOINTS = 50;
/** quality.md's budget rate: the p99 is measured at it (or below, when the service cannot reach it). */
export const BUDGET_DELIVERIES_PER_SECOND = 1_000;
/** The paced runs go at this share of the first run's rate when that is under the budget rate. */
export const PACE_SHARE = 0.8;
/** Events of the run as fast as the posters go (a delivery each: one endpoint per company). */
const SATURATED_EVENTS = 30_000;
/** How long each paced run posts. */
const PACED_SECONDS = 20;
/** Messages in a log batch, five lines each: batches of 1,000 lines. */
const MESSAGES_PER_BATCH = 200;
/** Log batches in flight at once. */
const POSTERS = 3;
/** Batches posted, and delivered, before the runs: the tables get rows and planner statistics. */
const WARMUP_BATCHES = 5;
/** How long the slow endpoint holds each answer. */
export const SLOW_ANSWER_MS = 10_000;
/** Every SAMPLE_EVERY-th first attempt is verified as a consumer verifies it (standardwebhooks). */
const SAMPLE_EVERY = 50;
/** A run is given up (and fails) when no delivery it waits for arrived for this long. */
const STALL_MS = 30_000;

/** One first attempt, as the receiver read it. */
interface Arrival {
  endpoint: number;
  /** When its body was read (ms since the epoch). */
  receivedAt: number;
  /** The payload's `timestamp`: written in the transaction that committed the event. */
  committedAt: number;
}

/** What one run of log batches came to at the receiver. */
export interface WebhookRun {
  events: number;
  /** Events posted a second (log batches, from the first post to the last answer). */
  postedPerSecond: number;
  /** First attempts the run waits for (the slow run: the other endpoints' only). */
  expected: number;
  /** First attempts counted. */
  deliveries: number;
  /** From the first post to the last delivery counted, or to giving up. */
  seconds: number;
  /** Why the run was given up before its last delivery; null when every one arrived. */
  stalled: string | null;
  /**
   * Commit of an event to the receiver reading its first attempt; an attempt never made counts
   * as later than any, so a quantile that reaches one is null.
   */
  latencyMs: { p50: number | null; p99: number | null; max: number | null };
}

export interface WebhookFigures {
  endpoints: number;
  companies: number;
  /**
   * As fast as the posters go: deliveries/s between 10 % and 90 % of the deliveries, or over the
   * whole run when it stalled.
   */
  saturated: WebhookRun & {
    deliveriesPerSecond: number;
    /** The service's CPU time per delivery, log ingest included (µs; null without /proc). */
    serviceCpuMicrosPerDelivery: number | null;
  };
  /** Events a second of the paced runs; a run is null when one before it stalled. */
  pace: number | null;
  paced: WebhookRun | null;
  /** Paced, endpoint 0 answering after SLOW_ANSWER_MS: the others' figures. */
  slowEndpoint: (WebhookRun & { slowAttempts: number }) | null;
  /** Attempts of an event an endpoint had already received (retries): none expected. */
  repeatedAttempts: number;
  signatures: { verified: number; failed: number; firstFailure: string | null };
}

export interface WebhookBenchOptions {
  /** Owners' access tokens, one per company: each company gets WEBHOOK_ENDPOINTS / tokens endpoints. */
  tokens: readonly string[];
  logShipperKey: string;
}

/**
 * quality.md's event webhooks row. Each endpoint is a port of a receiver in this process that
 * answers 200 at once, added by its company's owner (`POST /api/v1/webhooks`, `email.sent`);
 * the events come from log batches of 1,000 lines (messages of five lines, one recipient sent,
 * the companies in turn by `sasl_username`), each sent line an `email.sent` event for every
 * endpoint of its company. Three runs, each until its last delivery: as fast as the posters go
 * (deliveries/s); paced at the budget's rate (the p99 from an event's commit to its first
 * attempt); the same pace with endpoint 0 answering after 10 s (the others' p99). A run whose
 * deliveries stop coming is given up after STALL_MS, and the runs after it are not made: its
 * backlog would be theirs.
 */
export async function measureWebhooks(
  service: RunningService,
  watch: ServiceWatch,
  db: BenchDatabase,
  o: WebhookBenchOptions,
): Promise<WebhookFigures> {
  const companies = o.tokens.slice(0, WEBHOOK_ENDPOINTS);
  if (companies.length * 10 < WEBHOOK_ENDPOINTS)
    throw new Error(`event webhooks: ${companies.length} companies hold at most 10 endpoints each`);
  const receiver = new Receiver();
  try {
    await receiver.listen(WEBHOOK_ENDPOINTS);
    const relayUsernames = await Promise.all(companies.map((token) => relayUsername(service, db, token)));
    // Endpoint i belongs to company i % companies.length.
    const secrets: string[] = [];
    for (let i = 0; i < WEBHOOK_ENDPOINTS; i++)
      secrets.push(await addEndpoint(service, companies[i % companies.length], receiver.ports[i]));
    receiver.verifiers = secrets.map((secret) => new Webhook(secret));
    const endpointsOf = companies.map((_, company) =>
      Array.from({ length: WEBHOOK_ENDPOINTS }, (_, i) => i).filter((i) => i % companies.length === company),
    );

    let batches = 0;
    /** Posts `count` log batches, paced at `perSecond` events or as fast as the posters go. */
    const post = async (first: number, count: number, perSecond: number | null) => {
      const started = Date.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: POSTERS }, async () => {
          while (next < count) {
            const k = next++;
            if (perSecond !== null)
              await sleep(started + (k * MESSAGES_PER_BATCH * 1000) / perSecond - Date.now());
            await postLines(service, o.logShipperKey, logBatch(first + k, relayUsernames));
          }
        }),
      );
      return { events: count * MESSAGES_PER_BATCH, seconds: (Date.now() - started) / 1000 };
    };
    /** One run: its batches posted, then every delivery `counted` waited for (or given up on). */
    const run = async (count: number, perSecond: number | null, counted = (_endpoint: number) => true) => {
      receiver.arrivals = [];
      const first = batches;
      batches += count;
      const started = Date.now();
      const posted = await post(first, count, perSecond);
      // Message m is of company m % companies; each of its endpoints gets a delivery.
      let expected = 0;
      const firstMessage = first * MESSAGES_PER_BATCH;
      for (let m = firstMessage; m < firstMessage + posted.events; m++)
        expected += endpointsOf[m % companies.length].filter(counted).length;
      const stalled = await receiver.waitFor(expected, counted);
      const arrivals = receiver.arrivals.filter((a) => counted(a.endpoint));
      const end = stalled || arrivals.length === 0 ? Date.now() : arrivals[arrivals.length - 1].receivedAt;
      const result: WebhookRun = {
        events: posted.events,
        postedPerSecond: posted.events / posted.seconds,
        expected,
        deliveries: arrivals.length,
        seconds: (end - started) / 1000,
        stalled,
        latencyMs: latencies(arrivals, expected),
      };
      return { arrivals, result };
    };

    // A running relay's tables have rows and planner statistics, taken while its deliveries were
    // mostly delivered (autovacuum analyses a table as it grows): a few batches delivered, then
    // ANALYZE, as delivery-data.ts does for the ingest.
    const warmup = await run(WARMUP_BATCHES, null);
    if (warmup.result.stalled) throw new Error(`event webhooks warm-up: ${warmup.result.stalled}`);
    await watch.mark('event webhooks warm-up');
    await analyze(db, watch);

    console.log(
      `event webhooks: ${SATURATED_EVENTS.toLocaleString('en-US')} events as fast as ${POSTERS} posters send…`,
    );
    const cpuBefore = cpuMicros(service.pid);
    const saturated = await run(SATURATED_EVENTS / MESSAGES_PER_BATCH, null);
    const cpuAfter = cpuMicros(service.pid);
    await watch.mark('event webhooks, as fast as the posters send');
    const measured = {
      endpoints: WEBHOOK_ENDPOINTS,
      companies: companies.length,
      saturated: {
        ...saturated.result,
        deliveriesPerSecond: saturated.result.stalled
          ? saturated.result.deliveries / saturated.result.seconds
          : steadyRate(saturated.arrivals),
        serviceCpuMicrosPerDelivery:
          cpuBefore === undefined || cpuAfter === undefined || saturated.result.deliveries === 0
            ? null
            : (cpuAfter - cpuBefore) / saturated.result.deliveries,
      },
    };
    /** The figures, once the runs that could be made were made. */
    const figures = (paced: Pick<WebhookFigures, 'pace' | 'paced' | 'slowEndpoint'>): WebhookFigures => ({
      ...measured,
      ...paced,
      repeatedAttempts: receiver.repeated,
      signatures: receiver.signatures,
    });
    if (saturated.result.stalled) return figures({ pace: null, paced: null, slowEndpoint: null });

    const pace = Math.min(
      BUDGET_DELIVERIES_PER_SECOND,
      Math.floor(measured.saturated.deliveriesPerSecond * PACE_SHARE),
    );
    const pacedBatches = Math.max(1, Math.round((PACED_SECONDS * pace) / MESSAGES_PER_BATCH));
    console.log(`event webhooks: ${pace.toLocaleString('en-US')} events/s for ${PACED_SECONDS} s…`);
    const paced = await run(pacedBatches, pace);
    await watch.mark('event webhooks, paced');
    if (paced.result.stalled) return figures({ pace, paced: paced.result, slowEndpoint: null });

    console.log(`event webhooks: the same, endpoint 0 answering after ${SLOW_ANSWER_MS / 1000} s…`);
    receiver.slowEndpoint = 0;
    const slow = await run(pacedBatches, pace, (endpoint) => endpoint !== 0);
    const slowAttempts = receiver.arrivals.filter((a) => a.endpoint === 0).length;
    await watch.mark('event webhooks, paced, one endpoint answering in 10 s');
    return figures({ pace, paced: paced.result, slowEndpoint: { ...slow.result, slowAttempts } });
  } finally {
    await receiver.close();
  }
}

/**
 * WEBHOOK_ENDPOINTS HTTP servers on 127.0.0.1, one port per endpoint (as many origins as
 * endpoints, like customers' servers), answering 200 with no body at once, or after
 * SLOW_ANSWER_MS for `slowEndpoint`. Counts an event's first attempt at each endpoint.
 */
class Receiver {
  readonly ports: number[] = [];
  verifiers: Webhook[] = [];
  arrivals: Arrival[] = [];
  slowEndpoint: number | null = null;
  repeated = 0;
  readonly signatures = { verified: 0, failed: 0, firstFailure: null as string | null };
  private readonly servers: Server[] = [];
  private readonly seen = new Set<string>();
  private readonly held = new Set<NodeJS.Timeout>();

  async listen(count: number): Promise<void> {
    for (let endpoint = 0; endpoint < count; endpoint++) {
      const server = createServer((req, res) => this.receive(endpoint, req, res));
      this.servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
      const address = server.address();
      if (typeof address !== 'object' || !address) throw new Error('receiver: no port');
      this.ports.push(address.port);
    }
  }

  /**
   * Resolves once `expected` first attempts to the `counted` endpoints arrived (null), or with why
   * it gave up: none arrived for STALL_MS.
   */
  async waitFor(expected: number, counted: (endpoint: number) => boolean): Promise<string | null> {
    let seen = -1;
    let since = Date.now();
    for (;;) {
      const arrived = this.arrivals.filter((a) => counted(a.endpoint)).length;
      if (arrived >= expected) return null;
      if (arrived !== seen) {
        seen = arrived;
        since = Date.now();
      } else if (Date.now() - since > STALL_MS) {
        return `${arrived.toLocaleString('en-US')} of ${expected.toLocaleString('en-US')} deliveries arrived, then none for ${STALL_MS / 1000} s`;
      }
      await sleep(100);
    }
  }

  async close(): Promise<void> {
    for (const timer of this.held) clearTimeout(timer);
    await Promise.all(
      this.servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      ),
    );
  }

  private receive(endpoint: number, req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const receivedAt = Date.now();
      const body = Buffer.concat(chunks).toString('utf8');
      const first = `${endpoint} ${String(req.headers['webhook-id'])}`;
      if (this.seen.has(first)) this.repeated++;
      else {
        this.seen.add(first);
        const { timestamp } = JSON.parse(body) as { timestamp: string };
        this.arrivals.push({ endpoint, receivedAt, committedAt: Date.parse(timestamp) });
        if (this.seen.size % SAMPLE_EVERY === 0) this.verify(endpoint, req, body);
      }
      if (endpoint !== this.slowEndpoint) {
        res.writeHead(200).end();
        return;
      }
      const timer = setTimeout(() => {
        this.held.delete(timer);
        res.writeHead(200).end();
      }, SLOW_ANSWER_MS);
      this.held.add(timer);
    });
  }

  private verify(endpoint: number, req: IncomingMessage, body: string): void {
    const header = (name: string) => String(req.headers[name]);
    try {
      this.verifiers[endpoint].verify(body, {
        'webhook-id': header('webhook-id'),
        'webhook-timestamp': header('webhook-timestamp'),
        'webhook-signature': header('webhook-signature'),
      });
      this.signatures.verified++;
    } catch (e: unknown) {
      this.signatures.failed++;
      this.signatures.firstFailure ??= e instanceof Error ? e.message : String(e);
    }
  }
}

/** Log batch `n`: 200 messages of five lines, one recipient sent each, message m of company m % companies. */
function logBatch(n: number, relayUsernames: readonly string[]): string {
  const at = new Date().toISOString();
  const lines: string[] = [];
  for (let i = 0; i < MESSAGES_PER_BATCH; i++) {
    const m = n * MESSAGES_PER_BATCH + i;
    const q = `C${m.toString(16).toUpperCase().padStart(9, '0')}`;
    const company = relayUsernames[m % relayUsernames.length];
    lines.push(
      `${at} hooks1 postfix/smtpd[1]: ${q}: client=h[10.0.0.1], sasl_method=PLAIN, sasl_username=${company}`,
      `${at} hooks1 postfix/cleanup[2]: ${q}: message-id=<${q}@hooks.example>`,
      `${at} hooks1 postfix/qmgr[3]: ${q}: from=<news@hooks.example>, size=2048, nrcpt=1 (queue active)`,
      `${at} hooks1 postfix/smtp[4]: ${q}: to=<h${m}@example.net>, relay=mx[10.0.0.2]:25, delay=0.2, delays=0/0/0.1/0.1, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as R${q})`,
      `${at} hooks1 postfix/qmgr[3]: ${q}: removed`,
    );
  }
  return lines.join('\n');
}

async function postLines(service: RunningService, logShipperKey: string, body: string): Promise<void> {
  const res = await fetch(`${service.baseUrl}/api/v1/callback-raw-log`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain', 'x-api-key': logShipperKey },
    body,
  });
  if (res.status !== 200) throw new Error(`callback-raw-log: ${res.status} ${await res.text()}`);
}

/** The SASL username of the token's company: its messages' `sasl_username`. */
async function relayUsername(service: RunningService, db: BenchDatabase, token: string): Promise<string> {
  const me = await call<{ company: { uuid: string } }>(service, 'GET', '/api/v1/users/me', token, 200);
  const [company] = await db.query<{ relay_username: string }>(
    'SELECT relay_username FROM companies WHERE uuid = ?',
    [me.company.uuid],
  );
  return company.relay_username;
}

/** An endpoint for `email.sent` on the receiver's `port`, added by the company's owner; answers its secret. */
async function addEndpoint(service: RunningService, token: string, port: number): Promise<string> {
  const created = await call<{ secret: string }>(service, 'POST', '/api/v1/webhooks', token, 201, {
    url: `http://127.0.0.1:${port}/hooks`,
    events: ['email.sent'],
  });
  return created.secret;
}

/** Deliveries a second between the 10th and the 90th percentile of arrival: the steady part. */
function steadyRate(arrivals: readonly Arrival[]): number {
  const times = arrivals.map((a) => a.receivedAt).sort((a, b) => a - b);
  const from = Math.floor(times.length * 0.1);
  const to = Math.floor(times.length * 0.9);
  return (to - from) / ((times[to] - times[from]) / 1000);
}

/** Quantiles over the `expected` first attempts, those never made the latest. */
function latencies(arrivals: readonly Arrival[], expected: number): WebhookRun['latencyMs'] {
  const ms = arrivals.map((a) => a.receivedAt - a.committedAt).sort((a, b) => a - b);
  const at = (q: number) => ms[Math.max(0, Math.ceil(expected * q) - 1)] ?? null;
  return { p50: at(0.5), p99: at(0.99), max: at(1) };
}
