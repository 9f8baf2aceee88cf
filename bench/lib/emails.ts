import autocannon from 'autocannon';
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { createSecretKey, randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeSubmissionToken } from '../../src/modules/relay-submission/submission-token';
import type { BenchDatabase } from './database';
import type { ServiceWatch } from './event-loop';
import { RunningAgent, startRelayAgent } from './relay-agent';
import { accepts, call, cpuMicros, RunningService, sleep } from './service';
import { seedSigningDomain } from './signing-domain';

/** quality.md's row: one recipient a message. */
const BODY_TEXT = `${'Your order has shipped and will reach you within two days. '.repeat(17)}\n`;
/** Messages of the hand-over runs: the service's worker, then swaks, the same number each. */
const HANDOVER_MESSAGES = Number(process.env.BENCH_EMAILS_HANDOVER ?? 2_000);
/**
 * swaks processes at once. Each is a Perl start, a connection and a login for one message: 20
 * keep two CPUs busy, and 50 went no faster (about 40 messages/s both, here).
 */
const SWAKS_PROCESSES = Number(process.env.BENCH_SWAKS_PROCESSES ?? 20);
/** smtp-source's sessions: as many as the bench's connections (and the worker's submissions in flight). */
const SMTP_SOURCE_SESSIONS = Number(process.env.BENCH_SMTP_SOURCE_SESSIONS ?? 50);
/** quality.md's rate: the p99 is also measured with the posts paced at it. */
export const BUDGET_ACCEPTED_PER_SECOND = 500;
/** A hand-over is given up (and the bench fails) when no message was handed over for this long. */
const STALL_MS = 60_000;
/** How often the database is asked how many stored messages still wait for the relay. */
const POLL_MS = 200;
const DAY = 86_400_000;

/** Phases in which the service only waits (the bench starts Postfix, seeds, or runs swaks): not HTTP runs. */
export const EMAILS_SETUP_PHASE =
  'sending by HTTP: companies, relay agent and Postfix set up (the service idles)';
export const EMAILS_CANCEL_PHASE =
  'sending by HTTP: the scheduled messages canceled in the database (the service idles)';
export const EMAILS_SWAKS_PHASE = 'sending by HTTP: swaks submitting to Postfix (the service idles)';

/** Postfix, swaks and root (a private Postfix instance's folders belong to the postfix user). */
export function emailsBenchAvailable(): { ok: true } | { ok: false; why: string } {
  for (const program of ['postfix', 'swaks']) {
    if (spawnSync('which', [program]).status !== 0)
      return { ok: false, why: `${program} is not installed (apt-get install postfix swaks)` };
  }
  if (!existsSync('/etc/postfix/master.cf')) return { ok: false, why: '/etc/postfix/master.cf is missing' };
  if (process.getuid?.() !== 0) return { ok: false, why: 'a private Postfix instance needs root' };
  return { ok: true };
}

/**
 * A port on 127.0.0.1 held (listening, never accepting) from now until Postfix takes it: the
 * service is started with RELAY_SUBMIT_URL naming it long before the row runs, and meanwhile no
 * other socket of the bench may get it.
 */
export interface HeldPort {
  port: number;
  release(): Promise<void>;
}

export async function holdPort(): Promise<HeldPort> {
  const server: Server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('no port');
  return {
    port: address.port,
    release: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface EmailsBenchOptions {
  /** Owners' access tokens, one per company: each connection sends for a company of its own. */
  tokens: readonly string[];
  /** The service's ENCRYPTION_KEY (the agent decrypts the DKIM keys the bench stores with it). */
  encryptionKey: string;
  /** The service's RELAY_SUBMIT_SECRET: the agent takes its tokens, swaks logs in with one. */
  submitSecret: string;
  /** The port the service's RELAY_SUBMIT_URL names: Postfix's smtpd listens on it. */
  relayPort: HeldPort;
  /** The agent's environment (database, secrets, log level), as the relay agent row starts it. */
  agentEnv: Record<string, string>;
  connections: number;
  seconds: number;
  warmupS: number;
  /**
   * Starts a replica of the service on the same database with EMAIL_SUBMITTER=false (PostgreSQL
   * only: replicas share the queue there): the paced posts go to it while the first service's
   * worker hands them over, as the operator guide deploys it.
   */
  startApiReplica?: () => Promise<RunningService>;
}

/** autocannon's figures for one run of POST /api/v1/emails. */
export interface AcceptRun {
  acceptedPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  requests: number;
  non2xx: number;
  errors: number;
  durationS: number;
  serviceCpuMicrosPerRequest: number | null;
}

/** A run of posts, and the worker's hand-over of what it stored. */
export interface AcceptPhase extends AcceptRun {
  /** Messages stored (with the warm-up's), and how many of them still waited when the posts ended. */
  stored: number;
  backlogAtEnd: number;
  /** From the end of the posts until the last of them was submitted. */
  drainSeconds: number;
}

export interface HandOver {
  messages: number;
  seconds: number;
  perSecond: number;
}

export interface EmailFigures {
  companies: number;
  /**
   * POST /api/v1/emails as fast as the connections go, each message scheduled an hour ahead: the
   * HTTP path alone (the worker only looks for due messages), for comparison.
   */
  deferred: AcceptRun;
  /** The same paced at BUDGET_ACCEPTED_PER_SECOND: the API's own latency at the budget's rate, nothing handed over. */
  deferredPaced: AcceptRun;
  /** POST /api/v1/emails as fast as the connections go, the worker handing the messages to Postfix meanwhile. */
  accept: AcceptPhase;
  /** The same, paced at BUDGET_ACCEPTED_PER_SECOND over all connections. */
  paced: AcceptPhase;
  /** The same paced posts to an API replica (EMAIL_SUBMITTER=false), the hand-over in the first service; PostgreSQL only. */
  pacedApart: AcceptPhase | null;
  /** The worker handing over HANDOVER_MESSAGES stored messages made due at once, nothing else running. */
  service: HandOver & { serviceCpuMicrosPerMessage: number | null; connectionsAtEnd: number };
  /** The same number through swaks (AUTH PLAIN as the companies' relay usernames with submission tokens). */
  swaks: HandOver & { processes: number; failures: number; firstFailure: string | null };
  /**
   * smtp-source (Postfix's own load generator, in C) sending the same number of messages over
   * sessions it keeps open, without AUTH (it has none): the company is the one whose allowed
   * network is 127.0.0.1. What Postfix and the agent take from a client that costs next to nothing.
   */
  smtpSource: (HandOver & { sessions: number }) | { skipped: string };
  postfix: { version: string; processLimit: string };
}

/**
 * quality.md's "POST /api/v1/emails, one recipient, 50 connections, relay configured": a private
 * Postfix instance (its next hop the discard transport, so it never waits on delivery) with the
 * built relay agent beside it (policy, SMTP AUTH taking submission tokens, DKIM milter), both on
 * the service's database; the service started with RELAY_SUBMIT_URL at Postfix's port. Each company
 * (one per access token) gets a paid period, a verified signing domain and a `sending` API key.
 *
 * 1. accepted/s and latency of POST /api/v1/emails (a warm-up, then `seconds`), one connection per
 *    company with its key, while the worker hands the messages to Postfix as it does in production;
 *    then the same paced at BUDGET_ACCEPTED_PER_SECOND. After each, the backlog is waited for.
 *    On PostgreSQL the paced posts again, to an API replica (EMAIL_SUBMITTER=false) while the first
 *    service's worker hands them over: the deployment the operator guide describes.
 *    Before them, for comparison, the same posts scheduled an hour ahead (then canceled): the HTTP
 *    path without the hand-over competing for the service's event loop.
 * 2. the hand-over alone: HANDOVER_MESSAGES stored scheduled hours ahead, made due at once in the
 *    database, and a last one posted to wake the worker: messages submitted a second, from making
 *    them due to the last `submitted_at`.
 * 3. swaks, SWAKS_PROCESSES processes at a time (smtp-source cannot AUTH), submitting the same
 *    number of messages (same senders, recipient, subject and text) to the same Postfix port with
 *    the same credentials: each company's relay username and a submission token.
 * 4. for information, smtp-source: the same number without AUTH, sessions kept open.
 */
export async function measureEmails(
  service: RunningService,
  watch: ServiceWatch,
  db: BenchDatabase,
  o: EmailsBenchOptions,
): Promise<EmailFigures> {
  const senders = await prepareCompanies(service, db, o);
  const agent = await startRelayAgent({ ...o.agentEnv, RELAY_SUBMIT_SECRET: o.submitSecret });
  let postfix: BenchPostfix | undefined;
  try {
    await o.relayPort.release();
    postfix = await startBenchPostfix(o.relayPort.port, agent);
    await watch.mark(EMAILS_SETUP_PHASE);
    const fail = (what: string) =>
      new Error(
        `${what}\nPostfix's log ends:\n${postfix!.logTail()}\nthe agent's output ends:\n${agent.output()}\nthe service's output ends:\n${service.output()}`,
      );

    // 1. Accepted a second, the worker handing over meanwhile: as fast as the connections go, then paced.
    const clients = Array.from({ length: o.connections }, (_, i) => senders[i % senders.length]).map(
      (s, i) => ({
        headers: { 'content-type': 'application/json', authorization: `Bearer ${s.key}` },
        body: JSON.stringify(message(s, i)),
      }),
    );
    // The HTTP-alone posts are scheduled 1 hour ahead, the hand-over's 3 hours: a post of the first
    // still in flight when its run ends commits after the cancel, and must stay out of the second.
    const scheduledClients = (hours: number) => {
      const later = new Date(Date.now() + hours * 3_600_000).toISOString();
      return clients.map((c, i) => ({
        ...c,
        body: JSON.stringify({ ...message(senders[i % senders.length], i), scheduledAt: later }),
      }));
    };
    console.log(
      `POST /api/v1/emails scheduled an hour ahead (the HTTP path alone): ${o.warmupS} s warm-up, ${o.seconds} s…`,
    );
    await post(service, scheduledClients(1), { seconds: o.warmupS });
    const deferred = await post(service, scheduledClients(1), { seconds: o.seconds });
    if (deferred.non2xx || deferred.errors)
      throw fail(`POST /api/v1/emails (scheduled): ${deferred.non2xx} non-2xx, ${deferred.errors} errors`);
    await watch.mark('POST /api/v1/emails scheduled an hour ahead (the HTTP path alone)');
    console.log(
      `POST /api/v1/emails scheduled an hour ahead, paced at ${BUDGET_ACCEPTED_PER_SECOND}/s, ${o.seconds} s…`,
    );
    const deferredPaced = await post(service, scheduledClients(1), {
      seconds: o.seconds,
      rate: BUDGET_ACCEPTED_PER_SECOND,
    });
    if (deferredPaced.non2xx || deferredPaced.errors)
      throw fail(
        `POST /api/v1/emails (scheduled, paced): ${deferredPaced.non2xx} non-2xx, ${deferredPaced.errors} errors`,
      );
    await watch.mark('POST /api/v1/emails scheduled an hour ahead, paced (the HTTP path alone)');
    // Taken back, as DELETE /api/v1/emails/:id takes back each: they are not the hand-over's.
    await db.execute([
      {
        sql: "UPDATE emails SET status = 'canceled', next_attempt_at = NULL, content = NULL WHERE status = 'scheduled' AND next_attempt_at < ?",
        params: [new Date(Date.now() + 2 * 3_600_000)],
      },
    ]);
    await watch.mark(EMAILS_CANCEL_PHASE);
    const phase = async (
      runs: Array<{ seconds: number; rate?: number }>,
      name: string,
      target: RunningService = service,
    ) => {
      let stored = 0;
      let measured: AcceptRun | undefined;
      for (const until of runs) {
        measured = await post(target, clients, until);
        if (measured.non2xx || measured.errors)
          throw fail(
            `POST /api/v1/emails: ${measured.non2xx} non-2xx answers and ${measured.errors} errors of ${measured.requests}`,
          );
        stored += measured.requests;
      }
      const backlogAtEnd = await waiting(db);
      await watch.mark(name);
      const drainStart = performance.now();
      await handedOver(db, fail);
      const drainSeconds = (performance.now() - drainStart) / 1000;
      await watch.mark(`sending by HTTP: the backlog of "${name}" handed over to Postfix`);
      return { ...measured!, stored, backlogAtEnd, drainSeconds };
    };
    console.log(
      `POST /api/v1/emails: ${o.warmupS} s warm-up, ${o.seconds} s at ${o.connections} connections, the worker handing over meanwhile…`,
    );
    const accept = await phase(
      [{ seconds: o.warmupS }, { seconds: o.seconds }],
      `POST /api/v1/emails at ${o.connections} connections, the worker handing over meanwhile`,
    );
    console.log(`POST /api/v1/emails paced at ${BUDGET_ACCEPTED_PER_SECOND}/s, ${o.seconds} s…`);
    const paced = await phase(
      [{ seconds: o.seconds, rate: BUDGET_ACCEPTED_PER_SECOND }],
      `POST /api/v1/emails paced at ${BUDGET_ACCEPTED_PER_SECOND}/s, the worker handing over meanwhile`,
    );

    let pacedApart: AcceptPhase | null = null;
    if (o.startApiReplica) {
      const replica = await o.startApiReplica();
      try {
        console.log(
          `POST /api/v1/emails paced at ${BUDGET_ACCEPTED_PER_SECOND}/s to an API replica (EMAIL_SUBMITTER=false), ${o.seconds} s…`,
        );
        await post(replica, clients, { seconds: o.warmupS, rate: BUDGET_ACCEPTED_PER_SECOND });
        await handedOver(db, fail);
        pacedApart = await phase(
          [{ seconds: o.seconds, rate: BUDGET_ACCEPTED_PER_SECOND }],
          `POST /api/v1/emails paced at ${BUDGET_ACCEPTED_PER_SECOND}/s to an API replica, the hand-over in the first service`,
          replica,
        );
      } finally {
        await replica.stop();
      }
    }

    // 2. The hand-over alone.
    console.log(`the worker handing ${HANDOVER_MESSAGES} messages to Postfix, made due at once…`);
    const scheduled = await post(service, scheduledClients(3), { amount: HANDOVER_MESSAGES - 1 });
    if (scheduled.non2xx || scheduled.errors || scheduled.requests !== HANDOVER_MESSAGES - 1)
      throw fail(`POST /api/v1/emails (scheduled): ${scheduled.non2xx} non-2xx, ${scheduled.errors} errors`);
    await watch.mark(`sending by HTTP: ${HANDOVER_MESSAGES - 1} messages stored, scheduled 3 hours ahead`);
    const cpuBefore = cpuMicros(service.pid);
    const due = new Date();
    await db.execute([
      {
        sql: "UPDATE emails SET next_attempt_at = ? WHERE status = 'scheduled' AND next_attempt_at > ?",
        params: [due, new Date(due.getTime() + 2 * 3_600_000)],
      },
    ]);
    // Posted after the others were made due: it wakes the worker as every stored message does.
    await post(service, clients.slice(0, 1), { amount: 1 });
    const last = await handedOver(db, fail);
    const cpuAfter = cpuMicros(service.pid);
    const serviceSeconds = (last.getTime() - due.getTime()) / 1000;
    const connectionsAtEnd = establishedTo(o.relayPort.port);
    await watch.mark(`sending by HTTP: the worker handing over ${HANDOVER_MESSAGES} messages`);

    // 3. swaks, the same messages and credentials; 4. smtp-source.
    console.log(`swaks: ${HANDOVER_MESSAGES} messages, ${SWAKS_PROCESSES} processes at a time…`);
    const swaks = await swaksRun(o.relayPort.port, senders, o.submitSecret);
    if (swaks.failures)
      throw fail(
        `swaks: ${swaks.failures} of ${HANDOVER_MESSAGES} messages refused (first: ${swaks.firstFailure})`,
      );
    console.log(`smtp-source: ${HANDOVER_MESSAGES} messages, ${SMTP_SOURCE_SESSIONS} sessions kept open…`);
    const smtpSource = await smtpSourceRun(o.relayPort.port, senders[0], fail);
    await watch.mark(EMAILS_SWAKS_PHASE);
    return {
      companies: senders.length,
      deferred,
      deferredPaced,
      accept,
      paced,
      pacedApart,
      service: {
        messages: HANDOVER_MESSAGES,
        seconds: serviceSeconds,
        perSecond: HANDOVER_MESSAGES / serviceSeconds,
        serviceCpuMicrosPerMessage:
          cpuBefore === undefined || cpuAfter === undefined
            ? null
            : (cpuAfter - cpuBefore) / HANDOVER_MESSAGES,
        connectionsAtEnd,
      },
      swaks,
      smtpSource,
      postfix: { version: postfix.version, processLimit: postfix.processLimit },
    };
  } finally {
    postfix?.stop();
    await agent.stop();
    // The company found by its network for smtp-source is found so no more (the bench goes on).
    await call(service, 'PUT', `/api/v1/companies/${senders[0].companyUuid}/allowed-ips`, o.tokens[0], 200, {
      ips: [],
    }).catch((e: unknown) => console.warn(`allowed IPs not cleared: ${String(e)}`));
  }
}

interface Sender {
  companyUuid: string;
  relayUsername: string;
  domain: string;
  key: string;
}

/** The message connection `i` sends: from its company's domain, one recipient. */
const message = (s: Sender, i: number) => ({
  from: `Shop <orders@${s.domain}>`,
  to: `reader-${i}@example.net`,
  subject: `Your order ${i} has shipped`,
  text: BODY_TEXT,
});

/**
 * Each token's company as the relay sees a customer: a paid period with room in its quota, a
 * verified signing domain (its DKIM key encrypted with the service's key), and a `sending` key its
 * owner made through the API.
 */
async function prepareCompanies(
  service: RunningService,
  db: BenchDatabase,
  o: EmailsBenchOptions,
): Promise<Sender[]> {
  const senders: Sender[] = [];
  for (const [i, token] of o.tokens.entries()) {
    const me = await call<{ company: { uuid: string } }>(service, 'GET', '/api/v1/users/me', token, 200);
    const [company] = await db.query<{ relay_username: string }>(
      'SELECT relay_username FROM companies WHERE uuid = ?',
      [me.company.uuid],
    );
    await db.execute([
      {
        sql: 'UPDATE companies SET package_uuid = ?, period_start = ?, period_end = ?, quota = ?, used = 0 WHERE uuid = ?',
        params: [
          randomUUID(),
          new Date(Date.now() - DAY),
          new Date(Date.now() + 30 * DAY),
          1_000_000_000,
          me.company.uuid,
        ],
      },
    ]);
    const domain = `bench-mail-${i}-${randomBytes(3).toString('hex')}.example`;
    await seedSigningDomain(db, o.encryptionKey, company.relay_username, domain);
    const { key } = await call<{ key: string }>(service, 'POST', '/api/v1/api-keys', token, 201, {
      name: 'bench sending',
      scope: 'sending',
    });
    senders.push({ companyUuid: me.company.uuid, relayUsername: company.relay_username, domain, key });
  }
  // smtp-source cannot AUTH: the first company is the one whose network 127.0.0.1 is (the worker
  // and swaks log in, and a login decides before the network does). Set before the agent starts.
  await call(service, 'PUT', `/api/v1/companies/${senders[0].companyUuid}/allowed-ips`, o.tokens[0], 200, {
    ips: ['127.0.0.1/32'],
  });
  return senders;
}

/** POST /api/v1/emails from one connection per client, each with its own headers and body. */
async function post(
  service: RunningService,
  clients: Array<{ headers: Record<string, string>; body: string }>,
  until: { seconds: number; rate?: number } | { amount: number },
): Promise<AcceptRun> {
  if ('seconds' in until && until.rate)
    return pacedPost(service, clients, { seconds: until.seconds, rate: until.rate });
  let connection = 0;
  const cpuBefore = cpuMicros(service.pid);
  const result = await autocannon({
    url: `${service.baseUrl}/api/v1/emails`,
    method: 'POST',
    connections: Math.min(clients.length, 'amount' in until ? until.amount : clients.length),
    ...('seconds' in until
      ? { duration: until.seconds, ...(until.rate && { overallRate: until.rate }) }
      : { amount: until.amount }),
    setupClient: (client) => {
      const c = clients[connection++ % clients.length];
      client.setHeadersAndBody(c.headers, c.body);
    },
  });
  const cpuAfter = cpuMicros(service.pid);
  return {
    acceptedPerSecond: result['2xx'] / result.duration,
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    requests: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    durationS: result.duration,
    serviceCpuMicrosPerRequest:
      cpuBefore === undefined || cpuAfter === undefined
        ? null
        : (cpuAfter - cpuBefore) / result.requests.total,
  };
}

/**
 * Posts at `rate` a second spread evenly over time (request n leaves at start + n / rate), over
 * at most as many kept-alive connections as there are clients, each request with the next
 * client's key and body. autocannon's `overallRate` gives each connection its own timer started
 * at the same moment, so its connections fire together: a burst of 50 every 100 ms, whose queue
 * is then what the latency measures. A request's latency runs from when it was due, so a request
 * held back for a free connection counts its wait (no coordinated omission).
 */
async function pacedPost(
  service: RunningService,
  clients: Array<{ headers: Record<string, string>; body: string }>,
  o: { seconds: number; rate: number },
): Promise<AcceptRun> {
  const agent = new Agent({ keepAlive: true, maxSockets: clients.length });
  const url = new URL(`${service.baseUrl}/api/v1/emails`);
  const total = Math.round(o.seconds * o.rate);
  const latencies: number[] = [];
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  const send = (n: number, due: number) =>
    new Promise<void>((resolve) => {
      const c = clients[n % clients.length];
      const req = request(
        { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers: c.headers },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(performance.now() - due);
            if (res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300) ok++;
            else non2xx++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(c.body);
    });
  const cpuBefore = cpuMicros(service.pid);
  const start = performance.now();
  const inFlight: Array<Promise<void>> = [];
  for (let n = 0; n < total; n++) {
    const due = start + (n * 1000) / o.rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    inFlight.push(send(n, due));
  }
  await Promise.all(inFlight);
  const durationS = (performance.now() - start) / 1000;
  const cpuAfter = cpuMicros(service.pid);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
  return {
    acceptedPerSecond: ok / durationS,
    latencyMs: {
      p50: at(0.5),
      p90: at(0.9),
      p99: at(0.99),
      max: Math.round(latencies[latencies.length - 1] ?? 0),
    },
    requests: ok,
    non2xx,
    errors,
    durationS,
    serviceCpuMicrosPerRequest:
      cpuBefore === undefined || cpuAfter === undefined ? null : (cpuAfter - cpuBefore) / Math.max(1, total),
  };
}

/**
 * Stored messages not yet handed to the relay: queued (a claimed one too, while its submission
 * runs), or scheduled and due (not those scheduled hours ahead).
 */
async function waiting(db: BenchDatabase): Promise<number> {
  const [row] = await db.query<{ n: string | number }>(
    "SELECT COUNT(*) AS n FROM emails WHERE status = 'queued' OR (status = 'scheduled' AND next_attempt_at <= ?)",
    [new Date()],
  );
  return Number(row.n);
}

/**
 * Waits until no stored message waits any more; fails when one failed, or when none was handed
 * over for STALL_MS. Answers the latest `submitted_at` (the service's clock: this machine's).
 */
async function handedOver(db: BenchDatabase, fail: (what: string) => Error): Promise<Date> {
  let left = await waiting(db);
  let progressAt = performance.now();
  while (left > 0) {
    await sleep(POLL_MS);
    const now = await waiting(db);
    if (now < left) progressAt = performance.now();
    left = now;
    if (performance.now() - progressAt > STALL_MS) {
      const stuck = await db.query<Record<string, unknown>>(
        'SELECT e.id, e.status, e.attempts, e.last_error, e.claim, e.next_attempt_at, e.created_at, e.updated_at, c.relay_username ' +
          "FROM emails e JOIN companies c ON c.id = e.company_id WHERE e.status = 'queued' OR (e.status = 'scheduled' AND e.next_attempt_at <= ?) ORDER BY e.id LIMIT 20",
        [new Date()],
      );
      throw fail(
        `${left} messages not handed over in ${STALL_MS / 1000} s: ${JSON.stringify(stuck, null, 1)}`,
      );
    }
  }
  const failed = await db.query<{ last_error: string | null }>(
    "SELECT last_error FROM emails WHERE status = 'failed' LIMIT 1",
    [],
  );
  if (failed.length) throw fail(`a message failed: ${failed[0].last_error}`);
  const [row] = await db.query<{ at: Date | string }>('SELECT MAX(submitted_at) AS at FROM emails', []);
  return typeof row.at === 'string' ? new Date(`${row.at.replace(' ', 'T')}Z`) : row.at;
}

/** TCP connections established to `port` on this machine (the worker's pooled connections), from /proc. */
function establishedTo(port: number): number {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  try {
    return readFileSync('/proc/net/tcp', 'utf8')
      .split('\n')
      .slice(1)
      .filter((line) => {
        const fields = line.trim().split(/\s+/);
        // Remote address is field 2; state 01 is ESTABLISHED.
        return fields[2]?.endsWith(`:${hex}`) && fields[3] === '01';
      }).length;
  } catch {
    return NaN;
  }
}

/** HANDOVER_MESSAGES through swaks, SWAKS_PROCESSES at a time, the companies in turn. */
async function swaksRun(port: number, senders: Sender[], submitSecret: string) {
  const key = createSecretKey(Buffer.from(submitSecret, 'utf8'));
  const tokens = senders.map((s) => makeSubmissionToken(key, s.relayUsername));
  let next = 0;
  let failures = 0;
  let firstFailure: string | null = null;
  const started = performance.now();
  const one = (i: number) => {
    const s = senders[i % senders.length];
    const m = message(s, i);
    return new Promise<void>((resolve) => {
      const child = spawn(
        'swaks',
        [
          '--server',
          `127.0.0.1:${port}`,
          '--auth',
          'PLAIN',
          '--auth-user',
          s.relayUsername,
          '--auth-password',
          tokens[i % senders.length],
          '--from',
          `orders@${s.domain}`,
          '--to',
          m.to,
          '--header',
          `Subject: ${m.subject}`,
          '--header',
          `From: ${m.from}`,
          '--body',
          BODY_TEXT,
          '--timeout',
          '30',
          '--silent',
          '2',
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let errors = '';
      child.stderr.on('data', (d: Buffer) => (errors += d.toString()));
      child.on('close', (code) => {
        if (code !== 0) {
          failures++;
          firstFailure ??= `exit ${code}: ${errors.trim().slice(0, 300)}`;
        }
        resolve();
      });
    });
  };
  const worker = async () => {
    while (next < HANDOVER_MESSAGES) await one(next++);
  };
  await Promise.all(Array.from({ length: SWAKS_PROCESSES }, worker));
  const seconds = (performance.now() - started) / 1000;
  return {
    messages: HANDOVER_MESSAGES,
    seconds,
    perSecond: HANDOVER_MESSAGES / seconds,
    processes: SWAKS_PROCESSES,
    failures,
    firstFailure,
  };
}

/**
 * HANDOVER_MESSAGES by smtp-source, SMTP_SOURCE_SESSIONS sessions each sending message after message
 * (-d), as the company whose network 127.0.0.1 is; the same sender, recipient, subject and about
 * the same size as the others' messages.
 */
async function smtpSourceRun(
  port: number,
  sender: Sender,
  fail: (what: string) => Error,
): Promise<EmailFigures['smtpSource']> {
  if (spawnSync('which', ['smtp-source']).status !== 0) return { skipped: 'smtp-source is not installed' };
  const m = message(sender, 0);
  const started = performance.now();
  const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(
      'smtp-source',
      [
        '-s',
        String(SMTP_SOURCE_SESSIONS),
        '-m',
        String(HANDOVER_MESSAGES),
        '-d',
        '-l',
        String(BODY_TEXT.length),
        '-f',
        `orders@${sender.domain}`,
        '-t',
        m.to,
        '-S',
        m.subject,
        '-M',
        'bench.client',
        `127.0.0.1:${port}`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
  const seconds = (performance.now() - started) / 1000;
  if (result.code !== 0) throw fail(`smtp-source exited with ${result.code}: ${result.output.slice(0, 500)}`);
  return {
    messages: HANDOVER_MESSAGES,
    seconds,
    perSecond: HANDOVER_MESSAGES / seconds,
    sessions: SMTP_SOURCE_SESSIONS,
  };
}

interface BenchPostfix {
  version: string;
  processLimit: string;
  logTail(): string;
  stop(): void;
}

/**
 * A private Postfix instance for the bench (docs/postfix-notes.md "A private instance for
 * tests"): its own folders, its smtpd on `port` of 127.0.0.1, the relay agent's policy, SMTP AUTH
 * and milter with the operator guide's main.cf lines, and every message, once queued, to the
 * discard transport: what is measured is the hand-over (smtpd, the agent, cleanup), not delivery.
 * The agent must listen first: smtpd connects to its milter and SASL listeners at every
 * connection, and a refused one makes master throttle smtpd for a minute.
 */
async function startBenchPostfix(port: number, agent: RunningAgent): Promise<BenchPostfix> {
  const dir = mkdtempSync(join(tmpdir(), 'postfix-bench-'));
  const configDir = join(dir, 'etc');
  const logFile = `/var/log/postfix-bench-${process.pid}-${randomBytes(4).toString('hex')}.log`;
  let started = false;
  const stop = () => {
    if (started) spawnSync('postfix', ['-c', configDir, 'stop'], { stdio: 'ignore' });
    started = false;
    rmSync(dir, { recursive: true, force: true });
    rmSync(logFile, { force: true });
  };
  // Room for every connection the worker's pools may hold (3 for each of up to 100 relay
  // usernames) beside the swaks processes: Postfix's default is 100 processes per service.
  const processLimit = process.env.BENCH_POSTFIX_PROCESS_LIMIT ?? '400';
  try {
    chmodSync(dir, 0o755);
    for (const sub of ['etc', 'spool', 'lib']) mkdirSync(join(dir, sub));
    spawnSync('chown', ['postfix', join(dir, 'lib')]);
    const master = readFileSync('/etc/postfix/master.cf', 'utf8');
    const moved = master.replace(/^smtp(\s+inet\s)/m, `${port}$1`);
    if (moved === master) throw new Error('/etc/postfix/master.cf has no "smtp inet" service to move');
    writeFileSync(join(configDir, 'master.cf'), moved);
    const settings: Record<string, string> = {
      compatibility_level: '3.6',
      queue_directory: join(dir, 'spool'),
      data_directory: join(dir, 'lib'),
      multi_instance_name: 'postfix-bench',
      syslog_name: 'postfix',
      maillog_file: logFile,
      inet_interfaces: '127.0.0.1',
      inet_protocols: 'ipv4',
      myhostname: 'relay.bench',
      mydestination: '',
      alias_maps: '',
      mynetworks: '127.0.0.0/8',
      default_transport: 'discard:bench',
      relay_transport: 'discard:bench',
      default_process_limit: processLimit,
      smtpd_relay_restrictions: `check_policy_service inet:127.0.0.1:${agent.ports.policy}, reject`,
      smtpd_sasl_type: 'dovecot',
      smtpd_sasl_path: `inet:127.0.0.1:${agent.ports.sasl}`,
      smtpd_sasl_auth_enable: 'yes',
      smtpd_tls_auth_only: 'no',
      smtpd_milters: `inet:127.0.0.1:${agent.ports.milter}`,
      non_smtpd_milters: '$smtpd_milters',
      milter_default_action: 'tempfail',
      disable_mime_output_conversion: 'yes',
      local_header_rewrite_clients: 'permit_mynetworks, permit_sasl_authenticated',
    };
    writeFileSync(
      join(configDir, 'main.cf'),
      Object.entries(settings)
        .map(([name, value]) => `${name} = ${value}\n`)
        .join(''),
    );
    await run('postfix', ['-c', configDir, 'start']);
    started = true;
    const deadline = performance.now() + 20_000;
    while (!(await accepts(port))) {
      if (performance.now() > deadline) throw new Error(`Postfix does not listen on port ${port}`);
      await sleep(100);
    }
  } catch (error) {
    stop();
    throw error;
  }
  const version = spawnSync('postconf', ['-c', configDir, '-h', 'mail_version'], {
    encoding: 'utf8',
  }).stdout.trim();
  return {
    version,
    processLimit,
    logTail: () => {
      try {
        return readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n');
      } catch {
        return '(no log)';
      }
    },
    stop,
  };
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(command, args, (error, stdout, stderr) =>
      error
        ? reject(new Error(`${command} ${args.join(' ')}: ${error.message}\n${stdout}${stderr}`))
        : resolve(),
    );
  });
}
