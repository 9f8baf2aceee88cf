import type { BenchDatabase } from './database';
import autocannon from 'autocannon';
import { performance } from 'node:perf_hooks';
import type { EventLoopDelayReport } from '../../src/common/runtime/event-loop-report';
import { RssSampler, type RunningService } from './service';

/** quality.md: log batches of one queue sent at once. */
export const QUEUE_BATCHES = 40;
/**
 * Delivery lines a batch, all of the one queue: 40 × 25 = 1,000 recipients, the most one
 * message can have with Postfix's default `smtpd_recipient_limit` (1000).
 */
const LINES_PER_BATCH = 25;
const DAY = 86_400_000;
const MB = 1024 * 1024;

/** What the service's event loop and memory did during one phase of the bench. */
export interface PhaseReading extends EventLoopDelayReport {
  during: string;
  /** Highest VmRSS sampled every 100 ms during the phase (null without /proc). */
  rssPeakMb: number | null;
}

/**
 * The phase in which the bench analyses the database, as autovacuum would a running relay's: on
 * SQLite its ANALYZE holds the write lock from another connection, and a write of the service
 * waits for it (synchronously, busy_timeout). The bench's work, not the service's: an idle phase.
 */
export const ANALYZE_PHASE = 'ANALYZE (the bench works on the database, the service idles)';

/** ANALYZE, then the phase marked as ANALYZE_PHASE. */
export async function analyze(db: Pick<BenchDatabase, 'execute'>, watch: ServiceWatch): Promise<void> {
  await db.execute([{ sql: 'ANALYZE', params: [] }]);
  await watch.mark(ANALYZE_PHASE);
}

/**
 * Cuts the bench into phases: `mark(name)` closes the phase running since the previous mark (its
 * event-loop delay, read over IPC, and its sampled RSS peak, under `name`) and opens the next.
 */
export class ServiceWatch {
  readonly phases: PhaseReading[] = [];
  private rss: RssSampler | undefined;

  constructor(private readonly service: RunningService) {}

  /** Starts the monitor in the service (its first answer) and the first phase. */
  async start(): Promise<void> {
    await this.service.eventLoopDelay();
    this.openRss();
  }

  async mark(during: string): Promise<PhaseReading> {
    const loop = await this.service.eventLoopDelay();
    this.rss?.stop();
    const peak = this.rss?.peak();
    const reading = { ...loop, during, rssPeakMb: peak === undefined ? null : peak / MB };
    this.phases.push(reading);
    this.openRss();
    return reading;
  }

  /** Ends the last phase's sampling without reading it (the bench is done with the service). */
  stop(): void {
    this.rss?.stop();
  }

  /** The phase whose event loop was held longest. */
  worst(): PhaseReading {
    return this.phases.reduce((a, b) => (b.maxMs > a.maxMs ? b : a));
  }

  private openRss(): void {
    this.rss = new RssSampler(this.service.pid);
    this.rss.start();
  }
}

export interface HeavyRequestsOptions {
  /** A user's bearer token: the export is of its company's records. */
  token: string;
  logShipperKey: string;
  /** The SASL username of that company: the queue's mail is its. */
  relayUsername: string;
  /** relay-status asked meanwhile: headers and the bodies sent in turn. */
  relayHeaders: Record<string, string>;
  relayBodies: string[];
  relayConnections: number;
  /** METRICS_TOKEN of the service: relay-status as the service itself timed it (its histogram). */
  metricsToken: string;
}

export interface HeavyRequestsFigures {
  loop: PhaseReading;
  exportRows: number;
  exportSeconds: number;
  queueBatches: number;
  queueLines: number;
  queueSeconds: number;
  relayStatus: {
    connections: number;
    requests: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
    non2xx: number;
    errors: number;
    /**
     * The same answers as the service timed them (request read to response written, its
     * `http_request_duration_seconds` histogram): how many took each bucket's bound or less. The
     * client's figures above add the wait before the service reads a request, and the client's own
     * share of the machine's CPU.
     */
    serviceTimed: { total: number; atMostMs: Record<string, number> };
  };
  seconds: number;
}

/**
 * The heavy requests of quality.md's event-loop row, all at once: the CSV export of every record
 * of one company (1,000,000 in the full run) and QUEUE_BATCHES log batches for one queue (its
 * 1,000 recipients' delivery lines) sent together, while relay-status is asked on `relayConnections` connections for as
 * long as they run. Answers the service's event-loop delay over that time and relay-status's
 * latency meanwhile.
 */
export async function measureHeavyRequests(
  service: RunningService,
  watch: ServiceWatch,
  o: HeavyRequestsOptions,
): Promise<HeavyRequestsFigures> {
  const q = 'BLOOP00001';
  const at = new Date().toISOString();
  // The queue is known first (who sent it), so every batch below works on its one row.
  await shipLines(service, o.logShipperKey, [
    `${at} bench1 postfix/smtpd[1]: ${q}: client=h[10.0.0.1], sasl_method=PLAIN, sasl_username=${o.relayUsername}`,
    `${at} bench1 postfix/cleanup[2]: ${q}: message-id=<${q}@bench.example>`,
    `${at} bench1 postfix/qmgr[3]: ${q}: from=<news@bench.example>, size=2048, nrcpt=${QUEUE_BATCHES * LINES_PER_BATCH} (queue active)`,
  ]);
  const batches = Array.from({ length: QUEUE_BATCHES }, (_, b) =>
    Array.from({ length: LINES_PER_BATCH }, (_, i) => {
      const n = b * LINES_PER_BATCH + i;
      return `${at} bench1 postfix/smtp[4]: ${q}: to=<loop${n}@example.net>, relay=mx[10.0.0.2]:25, delay=0.2, delays=0/0/0.1/0.1, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as L${n})`;
    }),
  );

  await watch.mark('setting up the export and the batches of one queue'); // from here
  const timedBefore = await relayStatusTimes(service, o.metricsToken);
  const started = performance.now();
  let request = 0;
  let relayRun: autocannon.Instance | undefined;
  const relay = new Promise<autocannon.Result>((resolve, reject) => {
    relayRun = autocannon(
      {
        url: `${service.baseUrl}/api/internal/relay-status`,
        connections: o.relayConnections,
        duration: 3_600, // stopped when the heavy requests are done
        setupClient: (client) => client.setHeaders(o.relayHeaders),
        requests: [
          {
            method: 'POST',
            setupRequest: (req) => ({ ...req, body: o.relayBodies[request++ % o.relayBodies.length] }),
          },
        ],
      },
      (error: Error | null, result) => (error ? reject(error) : resolve(result)),
    );
  });

  const exportRun = (async () => {
    const day = (offset: number) => new Date(Date.now() - offset * DAY).toISOString().slice(0, 10);
    const res = await fetch(`${service.baseUrl}/api/v1/reports/logs/export?from=${day(31)}&to=${day(0)}`, {
      headers: { authorization: `Bearer ${o.token}` },
    });
    if (res.status !== 200) throw new Error(`export: ${res.status} ${await res.text()}`);
    let rows = -1; // the header line
    const reader = res.body!.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      // indexOf, not a loop over the bytes: this process also times relay-status meanwhile, and
      // counting tens of MB a byte at a time held its own event loop (relay-status max 300+ ms).
      for (let i = value.indexOf(0x0a); i !== -1; i = value.indexOf(0x0a, i + 1)) rows++;
    }
    return { rows, seconds: (performance.now() - started) / 1000 };
  })();
  const queueRun = (async () => {
    await Promise.all(batches.map((lines) => shipLines(service, o.logShipperKey, lines)));
    return (performance.now() - started) / 1000;
  })();

  let exported: Awaited<typeof exportRun>;
  let queueSeconds: number;
  try {
    [exported, queueSeconds] = await Promise.all([exportRun, queueRun]);
  } finally {
    relayRun?.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  const timedAfter = await relayStatusTimes(service, o.metricsToken);
  const [loop, relayResult] = await Promise.all([
    watch.mark(`the export with ${QUEUE_BATCHES} batches of one queue, relay-status meanwhile`),
    relay,
  ]);
  return {
    loop,
    exportRows: exported.rows,
    exportSeconds: exported.seconds,
    queueBatches: QUEUE_BATCHES,
    queueLines: QUEUE_BATCHES * LINES_PER_BATCH,
    queueSeconds,
    relayStatus: {
      connections: o.relayConnections,
      requests: relayResult.requests.total,
      p50Ms: relayResult.latency.p50,
      p99Ms: relayResult.latency.p99,
      maxMs: relayResult.latency.max,
      non2xx: relayResult.non2xx,
      errors: relayResult.errors,
      serviceTimed: {
        total: (timedAfter.get('+Inf') ?? 0) - (timedBefore.get('+Inf') ?? 0),
        atMostMs: Object.fromEntries(
          [...timedAfter]
            .filter(([le]) => le !== '+Inf')
            .map(([le, count]) => [String(Number(le) * 1000), count - (timedBefore.get(le) ?? 0)]),
        ),
      },
    },
    seconds,
  };
}

async function shipLines(service: RunningService, key: string, lines: string[]): Promise<void> {
  const res = await fetch(`${service.baseUrl}/api/v1/callback-raw-log`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain', 'x-api-key': key },
    body: lines.join('\n'),
  });
  if (res.status !== 200) throw new Error(`callback-raw-log: ${res.status} ${await res.text()}`);
}

/** relay-status's cumulative histogram buckets (`le` → answers), summed over its status labels. */
async function relayStatusTimes(service: RunningService, token: string): Promise<Map<string, number>> {
  const res = await fetch(`${service.baseUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`metrics: ${res.status} ${await res.text()}`);
  const buckets = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    if (
      !line.startsWith('http_request_duration_seconds_bucket{') ||
      !line.includes('route="/api/internal/relay-status"')
    )
      continue;
    const le = /le="([^"]+)"/.exec(line)?.[1];
    if (le) buckets.set(le, (buckets.get(le) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return buckets;
}
