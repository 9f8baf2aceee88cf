/**
 * `npm run bench`: the first figures of quality.md "Speed and memory", measured on this machine
 * against the built service (dist/main.js in a child process, started as a user starts it: no
 * MALLOC_* or NODE_OPTIONS), printed as one table and written to bench/results/latest.json. The
 * service's event-loop delay is read over an IPC channel (src/common/runtime/event-loop-report.ts)
 * between the phases. A figure over budget says "fail" but the exit code stays 0; the
 * exit code is 1 only when the bench itself breaks (service does not start, a request fails).
 *
 * The relay agent's figures (policy, SMTP AUTH, milter, its memory, its start, hostile local
 * clients) are measured the same way: the built agent (`node dist/relay-agent/main.js`) in its own
 * process on the same database, with the service's ENCRYPTION_KEY so it can decrypt the DKIM key
 * of the domain the bench verified; the milter beside Debian's OpenDKIM signing the same messages
 * when `opendkim` is installed.
 *
 * Event webhooks are delivered to a receiver in the bench's process (one port per endpoint on
 * 127.0.0.1, so the service runs with WEBHOOK_ALLOW_PRIVATE_TARGETS), the events made by log
 * batches; customer API keys are made through the API as an owner makes them.
 *
 * Environment: BENCH_DATABASE_URL (postgres://…; default the embedded SQLite database),
 * BENCH_DURATION (s per HTTP route, default 10), BENCH_AGENT_DURATION (s per relay-agent figure,
 * default 5), BENCH_CONNECTIONS (default 50), BENCH_LOG_LEVEL (default warn), BENCH_NODE_ARGS
 * and BENCH_AGENT_NODE_ARGS (flags for the service's and the agent's node, e.g.
 * "--cpu-prof --cpu-prof-dir=/tmp/prof", or "-r ./bench/stall-watch.cjs" for the stacks of the
 * service's event-loop stalls), BENCH_ONLY (comma-separated among `api-key`, `delivery`, `fleet`,
 * `webhooks`, `emails` and `reports`: only those rows (`delivery`: its phases' event loop and the export's memory), beside the token verification and the /health/live
 * ceiling their ratio needs; the other phases are skipped and bench/results/latest.json is left as
 * it was; `reports` seeds the BENCH_RECORDS clean records and times the summary, the log's first
 * page, the providers and bounce-categories reports and the deliverability-alerts job; `fleet`
 * is log ingest and provider events (deliveries, then hard bounces) at 50 connections, as 50 Postfix hosts ship; BENCH_FLEET_CONNECTIONS
 * changes that number, to see what the concurrency itself costs, and BENCH_FLEET_REPLICAS (default
 * 1) posts them in turn to that many processes of the service on the same database, to see what
 * replicas on the same machine add; its rows then stand for them all).
 *
 * The deliverability figures: over the seeded records (spread over the mailbox providers, each
 * failure classified by the service's own rules), the providers and bounce-categories reports of
 * the summary's 30 days, then the hourly `deliverability-alerts` job run on demand by a superAdmin
 * made with the admin command (`node dist/cli/admin-create.js`) and logged in through the API.
 *
 * Sending by HTTP (`emails`) needs Postfix and swaks (and root, for a private Postfix instance):
 * the service starts with RELAY_SUBMIT_URL at a port the bench holds until the row starts Postfix
 * there, with the built relay agent beside it; without them the row says why it was skipped.
 * BENCH_EMAILS_HANDOVER (messages of the hand-over runs, default 2,000), BENCH_SWAKS_PROCESSES
 * (default 20), BENCH_SMTP_SOURCE_SESSIONS (default 50) and BENCH_POSTFIX_PROCESS_LIMIT (its
 * default_process_limit, default 400; Postfix's own is 100) tune it; RELAY_SUBMIT_CONCURRENCY is
 * passed to the service as set (the service's default otherwise).
 */
import autocannon from 'autocannon';
import * as jwt from 'jsonwebtoken';
import { createSecretKey, randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { ACCESS_TOKEN_ALGORITHM, ACCESS_TOKEN_CLOCK_TOLERANCE_S } from '../src/modules/auth/token.service';
import { benchDatabase, BenchDatabase } from './lib/database';
import { measureHostileBodies } from './lib/hostile-bodies';
import { measurePolicy } from './lib/policy-server';
import {
  companyOf,
  DeliveryFigures,
  measureDeliveryData,
  SeededReports,
  seedAndTimeReports,
  SEEDING_PHASE,
} from './lib/delivery-data';
import {
  BUDGET_ALERT_JOB_MS,
  BUDGET_PROVIDERS_P95_MS,
  DeliverabilityFigures,
  JOB_RUNS,
  measureDeliverability,
} from './lib/deliverability';
import { EVENT_LOOP_RESOLUTION_MS } from '../src/common/runtime/event-loop-report';
import { ANALYZE_PHASE, measureHeavyRequests, QUEUE_BATCHES, ServiceWatch } from './lib/event-loop';
import {
  BATCH_TIMEOUT_MS,
  BUDGET_FLEET_BATCH_P99_MS,
  BUDGET_FLEET_EVENTS_PER_CEILING,
  BUDGET_FLEET_EVENTS_PER_SECOND,
  BUDGET_FLEET_LINES_PER_CEILING,
  BUDGET_FLEET_LINES_PER_SECOND,
  FLEET_CONNECTIONS,
  FLEET_REPLICAS,
  FleetFigures,
  LINES_PER_BATCH,
  measureFleet,
  ratePerSecondForP99,
} from './lib/fleet-ingest';
import { benchMessage, measureMilterMemory, measureMilterRate, MilterRun } from './lib/milter';
import { findOpenDkim, startOpenDkim } from './lib/opendkim';
import { measureHostileClients, QUALITY_HOSTILE_LOAD } from './lib/agent-hostile-clients';
import { measureAgentStarts, startRelayAgent } from './lib/relay-agent';
import { readKeys } from './lib/api-keys';
import {
  BUDGET_ACCEPTED_PER_SECOND,
  EMAILS_CANCEL_PHASE,
  EMAILS_SETUP_PHASE,
  EMAILS_SWAKS_PHASE,
  EmailFigures,
  emailsBenchAvailable,
  HeldPort,
  holdPort,
  measureEmails,
} from './lib/emails';
import {
  BUDGET_DELIVERIES_PER_SECOND,
  measureWebhooks,
  PACE_SHARE,
  SLOW_ANSWER_MS,
  WebhookFigures,
  WebhookRun,
} from './lib/webhooks';
import { RelayData, relayQuery, relayQueryByAddress, seedRelayData } from './lib/relay-data';
import { measureSasl, seedRelayPasswords } from './lib/sasl';
import { cpuMicros, RssSampler, residentBytes, RunningService, startService } from './lib/service';
import { seedSigningDomain } from './lib/signing-domain';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const AGENT_DURATION_S = Number(process.env.BENCH_AGENT_DURATION ?? 5);
const WARMUP_S = 2;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const JWT_SECONDS = 2;
/**
 * warn, not info: at info every request writes a log line, and the run would measure the log
 * sink (a pipe into this process) instead of the service. Production may run at info; the
 * figures here are the service's own cost.
 */
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'warn';
const MB = 1024 * 1024;
const INTERNAL_API_KEY = `bench-internal-${randomBytes(24).toString('hex')}`;
const LOG_SHIPPER_API_KEY = `bench-shipper-${randomBytes(24).toString('hex')}`;
const WEBHOOK_USER = 'bench-provider';
const WEBHOOK_PASSWORD = `bench-webhook-${randomBytes(24).toString('hex')}`;
const METRICS_TOKEN = `bench-metrics-${randomBytes(24).toString('hex')}`;
/** The service's and the relay agent's RELAY_SUBMIT_SECRET (sending by HTTP). */
const RELAY_SUBMIT_SECRET = `bench-submit-${randomBytes(24).toString('hex')}`;
/**
 * Connections asking relay-status while the export and the batches of one queue run (quality.md
 * gives no number): a steady stream of relay decisions, not a second saturating load.
 */
const HEAVY_RELAY_CONNECTIONS = 10;
/**
 * quality.md's bound on the event loop during every HTTP run, and on relay-status meanwhile: the
 * embedded SQLite (one small relay) has its own.
 */
const EVENT_LOOP_BOUND_MS = { postgres: 100, sqlite: 250 } as const;
const HEAVY_RELAY_STATUS_P99_MS = { postgres: 50, sqlite: 250 } as const;
/** Phases in which the bench works on the database and the service only waits: not HTTP runs. */
const IDLE_RELAY_SEED = 'seeding companies and suppression entries (the bench writes, the service idles)';
const IDLE_AGENT = "the relay agent's runs (the service idles)";
const IDLE_PHASES = [
  IDLE_RELAY_SEED,
  IDLE_AGENT,
  SEEDING_PHASE,
  ANALYZE_PHASE,
  EMAILS_SETUP_PHASE,
  EMAILS_CANCEL_PHASE,
  EMAILS_SWAKS_PHASE,
];
/** BENCH_ONLY: the phases run alone (with the ceiling), or every phase when empty. */
const ONLY_PHASES = ['api-key', 'delivery', 'fleet', 'webhooks', 'emails', 'reports'] as const;
const ONLY = (process.env.BENCH_ONLY ?? '')
  .split(',')
  .map((phase) => phase.trim())
  .filter(Boolean);
/** Clean records seeded for the report figures (quality.md: 1,000,000). */
const RECORDS = Number(process.env.BENCH_RECORDS ?? 1_000_000);

/** One key for the service, the agent and the bench's domain rows: the agent decrypts what they wrote. */
const ENCRYPTION_KEY = randomBytes(32).toString('base64');
/**
 * The milter's messages, and the SMTP client address the bench's Postfix milter client reports
 * for them (PostfixMilterClient.connectEvent's default): OpenDKIM is told it is an internal host.
 */
const MILTER_MESSAGE_BYTES = 10 * 1024;
const MEMORY_MESSAGES = 50;
const MEMORY_MESSAGE_BYTES = 10 * MB;
const MILTER_CLIENT_ADDRESS = '192.0.2.10';
/** Starts of the agent timed for "command to listening" (the worst against quality.md's 3 s). */
const AGENT_STARTS = 5;

/** Four different secrets of ≥ 32 characters; known to the bench, fixed for no reason but readability. */
const SECRETS = {
  JWT_ACCESS_SECRET: `bench-access-${randomBytes(24).toString('hex')}`,
  JWT_REFRESH_SECRET: `bench-refresh-${randomBytes(24).toString('hex')}`,
  JWT_VERIFICATION_SECRET: `bench-verification-${randomBytes(24).toString('hex')}`,
  JWT_RESET_SECRET: `bench-reset-${randomBytes(24).toString('hex')}`,
};

interface Figure {
  id: string;
  figure: string;
  value: number | null;
  unit: string;
  /** e.g. ≥ 100000; null for figures printed for information only. */
  budget: { op: '>=' | '<='; limit: number } | null;
  pass: boolean | null;
  note?: string;
}

interface HttpRun {
  path: string;
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  durationS: number;
  /** The service's own CPU time per request (user + system): robust to a noisy machine. */
  serviceCpuMicrosPerRequest: number | null;
}

function figure(
  id: string,
  name: string,
  value: number | null,
  unit: string,
  budget: Figure['budget'],
  note?: string,
): Figure {
  const pass =
    budget === null
      ? null
      : value !== null && (budget.op === '>=' ? value >= budget.limit : value <= budget.limit);
  return { id, figure: name, value, unit, budget, pass, note };
}

/** (a) The bearer guard's JWT check alone: what passport-jwt calls for every bearer request. */
function measureTokenVerification(): { perSecond: number; iterations: number } {
  const key = createSecretKey(Buffer.from(SECRETS.JWT_ACCESS_SECRET, 'utf8'));
  const token = jwt.sign(
    { userUuid: randomUUID(), contactUuid: randomUUID(), companyUuid: randomUUID(), isAdmin: false },
    key,
    { algorithm: ACCESS_TOKEN_ALGORITHM, expiresIn: 3600 },
  );
  const options: jwt.VerifyOptions = {
    algorithms: [ACCESS_TOKEN_ALGORITHM],
    clockTolerance: ACCESS_TOKEN_CLOCK_TOLERANCE_S,
  };
  const run = (seconds: number) => {
    const until = performance.now() + seconds * 1000;
    let iterations = 0;
    const started = performance.now();
    let now = started;
    do {
      for (let i = 0; i < 1000; i++) {
        const claims = jwt.verify(token, key, options);
        if (typeof claims === 'string') throw new Error('unexpected string payload');
      }
      iterations += 1000;
      now = performance.now();
    } while (now < until);
    return { iterations, elapsedMs: now - started };
  };
  run(0.3); // warm-up: JIT, crypto
  const { iterations, elapsedMs } = run(JWT_SECONDS);
  return { perSecond: iterations / (elapsedMs / 1000), iterations };
}

/** Connection i sends `headers[i % headers.length]` on every request; a POST sends `bodies` in turn, across all connections. */
async function load(
  service: RunningService,
  path: string,
  headers: Record<string, string>[],
  seconds: number,
  bodies?: string[],
) {
  const cpuBefore = cpuMicros(service.pid);
  let connection = 0;
  let request = 0;
  const result = await autocannon({
    url: `${service.baseUrl}${path}`,
    connections: CONNECTIONS,
    duration: seconds,
    setupClient: (client) => client.setHeaders(headers[connection++ % headers.length]),
    ...(bodies && {
      requests: [
        {
          method: 'POST',
          setupRequest: (req) => ({ ...req, body: bodies[request++ % bodies.length] }),
        },
      ],
    }),
  });
  const cpuAfter = cpuMicros(service.pid);
  const run: HttpRun = {
    path,
    requestsPerSecond: result['2xx'] / result.duration,
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationS: result.duration,
    serviceCpuMicrosPerRequest:
      cpuBefore === undefined || cpuAfter === undefined
        ? null
        : (cpuAfter - cpuBefore) / result.requests.total,
  };
  return run;
}

async function measureHttp(
  service: RunningService,
  path: string,
  headers: Record<string, string>[] = [{}],
  bodies?: string[],
) {
  await load(service, path, headers, WARMUP_S, bodies);
  const run = await load(service, path, headers, DURATION_S, bodies);
  if (run.non2xx || run.errors) {
    throw new Error(
      `${bodies ? 'POST' : 'GET'} ${path}: ${run.non2xx} non-2xx answers and ${run.errors} errors out of ${run.requests} requests`,
    );
  }
  return run;
}

async function api<T>(
  baseUrl: string,
  method: string,
  path: string,
  body: unknown,
  expected: number,
  headers: Record<string, string> = {},
): Promise<T> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== expected)
    throw new Error(`${method} ${path}: expected ${expected}, got ${res.status}: ${text}`);
  return (JSON.parse(text) as { data: T }).data;
}

/** A real, verified user and a bearer token for it: register and log in through the API. */
async function userToken(service: RunningService, db: BenchDatabase): Promise<string> {
  const email = `bench-${randomBytes(5).toString('hex')}@example.com`;
  const password = 'bench password 0123';
  await api(
    service.baseUrl,
    'POST',
    '/api/v1/users/register',
    { companyName: 'Bench Mail', fullName: 'Bench User', email, password },
    201,
  );
  // What following the verification link does; the link only reaches the log here.
  await db.activateUser(email);
  const login = await api<{ accessToken: string; expiresIn: number }>(
    service.baseUrl,
    'POST',
    '/api/v1/users/login',
    { email, password },
    200,
  );
  if (login.expiresIn < 600)
    throw new Error(`Access token lives ${login.expiresIn} s: too short for the run`);
  return login.accessToken;
}

/**
 * One user per connection, as fifty people using the API at once would be: a single user
 * would flatter anything that shares work between requests for the same caller.
 */
async function userTokens(service: RunningService, db: BenchDatabase, count: number): Promise<string[]> {
  const tokens: string[] = [];
  while (tokens.length < count) {
    const batch = Math.min(5, count - tokens.length); // argon2 is slow on purpose; a few at a time
    tokens.push(...(await Promise.all(Array.from({ length: batch }, () => userToken(service, db)))));
  }
  return tokens;
}

/**
 * quality.md's API key row: GET /api/v1/domains with `Bearer rk_…`, each connection with a `read`
 * key of its own company (made by that company's owner through the API).
 */
async function measureApiKeyRead(service: RunningService, tokens: string[]): Promise<HttpRun> {
  const keys = await readKeys(service.baseUrl, tokens);
  return measureHttp(
    service,
    '/api/v1/domains',
    keys.map((key) => ({ authorization: `Bearer ${key}` })),
  );
}

/** CPU time (user + system) of `pid` per unit of work done by `run`, in µs, or null without /proc. */
async function withCpu<T>(pid: number, run: () => Promise<T>, units: (result: T) => number) {
  const before = cpuMicros(pid);
  const result = await run();
  const after = cpuMicros(pid);
  return {
    result,
    cpuMicrosPerUnit: before === undefined || after === undefined ? null : (after - before) / units(result),
  };
}

function checkMilterRun(name: string, run: MilterRun, output: () => string): void {
  if (run.failures || run.messages === 0) {
    throw new Error(
      `${name}: ${run.failures} of ${run.messages + run.failures} messages not signed (first: ${run.firstFailure ?? 'none sent'}):\n${output()}`,
    );
  }
}

/**
 * quality.md's relay-agent figures: `dist/relay-agent/main.js` in its own process on the bench's
 * database, after the bench gave the 10,000 companies relay passwords (as the API stores them)
 * and the first one a verified domain with its DKIM key. Policy, SMTP AUTH and the milter each a
 * warm-up then AGENT_DURATION_S; the same milter messages through Debian's OpenDKIM; the agent's
 * memory with 50 messages of 10 MB in flight through the milter; last, the agent under hostile
 * local clients. Before all that, AGENT_STARTS starts of the agent timed from command to listening.
 */
async function measureRelayAgent(db: BenchDatabase, relayData: RelayData) {
  const accounts = await seedRelayPasswords(db, relayData.relayUsernames);
  const signing = await seedSigningDomain(
    db,
    ENCRYPTION_KEY,
    relayData.relayUsernames[0],
    'bench-signing.example',
  );
  const agentEnv = { NODE_ENV: 'development', LOG_LEVEL, ...db.env, ...SECRETS, ENCRYPTION_KEY };
  console.log(`relay agent start: ${AGENT_STARTS} starts, command to listening…`);
  const starts = await measureAgentStarts(agentEnv, AGENT_STARTS);
  const agent = await startRelayAgent(agentEnv);
  const options = { connections: CONNECTIONS, seconds: AGENT_DURATION_S, warmupS: WARMUP_S };
  try {
    console.log(
      `relay agent policy: ${WARMUP_S} s warm-up, ${AGENT_DURATION_S} s at ${CONNECTIONS} connections…`,
    );
    const policy = await measurePolicy({ pid: agent.pid, port: agent.ports.policy }, relayData, options);
    if (policy.failures)
      throw new Error(
        `relay agent policy: ${policy.failures} failed answers or closed connections:\n${agent.output()}`,
      );

    console.log(
      `relay agent SMTP AUTH: ${WARMUP_S} s warm-up, ${AGENT_DURATION_S} s at ${CONNECTIONS} connections…`,
    );
    const sasl = await measureSasl({ pid: agent.pid, port: agent.ports.sasl }, accounts, options);
    if (sasl.failures)
      throw new Error(
        `relay agent SMTP AUTH: ${sasl.failures} failed answers or closed connections:\n${agent.output()}`,
      );

    const message = benchMessage(MILTER_MESSAGE_BYTES, signing);
    const milterRun = async (port: number, pid: number, name: string, output: () => string) => {
      await measureMilterRate(port, message, CONNECTIONS, WARMUP_S);
      const client = process.cpuUsage();
      const measured = await withCpu(
        pid,
        () => measureMilterRate(port, message, CONNECTIONS, AGENT_DURATION_S),
        (r) => r.messages,
      );
      const clientCpu = process.cpuUsage(client);
      checkMilterRun(name, measured.result, output);
      return {
        ...measured.result,
        cpuMicrosPerMessage: measured.cpuMicrosPerUnit,
        clientCpuMicrosPerMessage: (clientCpu.user + clientCpu.system) / measured.result.messages,
      };
    };
    console.log(
      `relay agent milter: ${WARMUP_S} s warm-up, ${AGENT_DURATION_S} s at ${CONNECTIONS} connections, 10 KB messages…`,
    );
    const milter = await milterRun(agent.ports.milter, agent.pid, 'relay agent milter', agent.output);

    let openDkim: (Awaited<ReturnType<typeof milterRun>> & { version: string }) | { skipped: string };
    const binary = findOpenDkim();
    if (!binary) openDkim = { skipped: 'opendkim not installed (apt-get install opendkim)' };
    else {
      console.log(`OpenDKIM: the same messages, ${WARMUP_S} s warm-up, ${AGENT_DURATION_S} s…`);
      try {
        const server = await startOpenDkim(binary, signing, MILTER_CLIENT_ADDRESS);
        try {
          openDkim = {
            ...(await milterRun(server.port, server.pid, 'OpenDKIM', server.output)),
            version: server.version,
          };
        } finally {
          await server.stop();
        }
      } catch (e: unknown) {
        openDkim = { skipped: `OpenDKIM run failed: ${e instanceof Error ? e.message : String(e)}` };
      }
    }

    console.log(`relay agent memory: ${MEMORY_MESSAGES} messages of 10 MB in flight through the milter…`);
    const memory = await measureMilterMemory(
      agent.ports.milter,
      agent.pid,
      benchMessage(MEMORY_MESSAGE_BYTES, signing),
      MEMORY_MESSAGES,
    );
    if (!agent.running()) throw new Error(`The relay agent stopped during the run:\n${agent.output()}`);

    const load = QUALITY_HOSTILE_LOAD;
    console.log(
      `relay agent under hostile local clients: ${fmt(load.idle)} idle connections on each port, ` +
        `${load.frameAnnouncers} milter connections announcing a 1 MB frame, ${load.headerSenders} sending 1 MB of headers…`,
    );
    const hostile = await measureHostileClients(
      agent.ports,
      agent.pid,
      benchMessage(MILTER_MESSAGE_BYTES, signing),
      load,
    );
    if (!agent.running())
      throw new Error(`The relay agent stopped under hostile local clients:\n${agent.output()}`);
    return { readyMs: agent.readyMs, starts, policy, sasl, milter, openDkim, memory, hostile };
  } finally {
    await agent.stop();
  }
}

type RelayAgentRun = Awaited<ReturnType<typeof measureRelayAgent>>;

function relayAgentFigures(agent: RelayAgentRun): Figure[] {
  const { policy, sasl, milter, openDkim, memory, starts, hostile } = agent;
  const cpu = (micros: number | null, what: string) =>
    micros === null ? '' : `; agent CPU ${fmt(micros)} µs ${what}`;
  const milterNote = (run: typeof milter) =>
    `${fmt(run.messages)} messages in ${fmt(run.durationS, 1)} s, p99 ${fmt(run.p99Ms, 1)} ms; ` +
    `CPU ${run.cpuMicrosPerMessage === null ? 'n/a' : `${fmt(run.cpuMicrosPerMessage)} µs`} a message ` +
    `(bench client ${fmt(run.clientCpuMicrosPerMessage)} µs, on the same ${cpus().length} CPUs)`;
  const skipped = 'skipped' in openDkim ? openDkim.skipped : undefined;
  return [
    figure(
      'relay-agent-policy',
      `relay agent policy (POLICY_PORT), ${CONNECTIONS} connections, one recipient a request`,
      policy.decisionsPerSecond,
      '/s',
      { op: '>=', limit: 5_000 },
      `${fmt(policy.decisions)} decisions in ${fmt(policy.durationS, 1)} s${cpu(policy.agentCpuMicrosPerDecision, 'a decision')}`,
    ),
    figure(
      'relay-agent-sasl',
      `relay agent SMTP AUTH (SASL_PORT), ${CONNECTIONS} connections, AUTH PLAIN, right password`,
      sasl.authPerSecond,
      '/s',
      { op: '>=', limit: 5_000 },
      `${fmt(sasl.authentications)} in ${fmt(sasl.durationS, 1)} s over 10,000 accounts${cpu(sasl.agentCpuMicrosPerAuth, 'an AUTH')}`,
    ),
    figure(
      'relay-agent-sasl-p99',
      `relay agent SMTP AUTH p99 at ${CONNECTIONS} connections`,
      sasl.p99Ms,
      'ms',
      {
        op: '<=',
        limit: 10,
      },
    ),
    figure(
      'relay-agent-milter',
      `relay agent milter (MILTER_PORT), ${CONNECTIONS} connections, 10 KB messages signed`,
      milter.perSecond,
      'msg/s',
      { op: '>=', limit: 1_000 },
      milterNote(milter),
    ),
    figure(
      'opendkim-milter',
      'OpenDKIM, the same messages, client and key (RSA-2048)',
      skipped ? null : (openDkim as typeof milter).perSecond,
      'msg/s',
      null,
      skipped ?? `${(openDkim as { version: string }).version}; ${milterNote(openDkim as typeof milter)}`,
    ),
    figure(
      'relay-agent-milter-to-opendkim',
      'relay agent milter ratio to OpenDKIM',
      skipped ? null : milter.perSecond / (openDkim as typeof milter).perSecond,
      'ratio',
      null,
      skipped && 'no OpenDKIM run',
    ),
    figure(
      'relay-agent-milter-rss',
      `relay agent RSS, ${MEMORY_MESSAGES} messages of 10 MB in flight through the milter`,
      Number.isNaN(memory.peakMb) ? null : memory.peakMb,
      'MB',
      { op: '<=', limit: 300 },
      `VmHWM${memory.peakReset ? ' (reset before the run)' : " (the agent's whole life)"}; ${fmt(memory.rssBeforeMb)} MB before, ` +
        `sampled VmRSS peak ${fmt(memory.sampledPeakMb)} MB; ${fmt(memory.seconds, 1)} s for the ${MEMORY_MESSAGES} messages`,
    ),
    figure(
      'relay-agent-start',
      `relay agent start: command to listening (node dist/relay-agent/main.js, 3 listeners), worst of ${starts.runsMs.length}`,
      starts.worstMs / 1000,
      's',
      { op: '<=', limit: 3 },
      `median ${fmt(starts.medianMs / 1000, 2)} s; runs ${starts.runsMs.map((ms) => fmt(ms / 1000, 2)).join(', ')} s`,
    ),
    hostileFigure(hostile),
  ];
}

/**
 * RSS against quality.md's 300 MB, and a fail whatever the RSS when a normal message through the
 * milter did not come back signed meanwhile.
 */
function hostileFigure(hostile: RelayAgentRun['hostile']): Figure {
  const counted = (c: { opened: number; held: number; closedByAgent: number }) =>
    `${fmt(c.held)} held, ${fmt(c.closedByAgent)} closed by the agent`;
  const allSigned = hostile.normal.every((n) => n.signed);
  const result = figure(
    'relay-agent-hostile-rss',
    `relay agent RSS under hostile local clients (${fmt(QUALITY_HOSTILE_LOAD.idle)} idle a port, ` +
      `${QUALITY_HOSTILE_LOAD.frameAnnouncers} 1 MB frames, ${QUALITY_HOSTILE_LOAD.headerSenders} × 1 MB of headers), a normal message signed meanwhile`,
    Number.isNaN(hostile.peakMb) ? null : hostile.peakMb,
    'MB',
    { op: '<=', limit: 300 },
    `normal messages: ${hostile.normal
      .map((n) => `${n.when}: ${n.signed ? 'signed' : `NOT signed (${n.replies})`} in ${fmt(n.ms)} ms`)
      .join('; ')}; VmHWM${hostile.peakReset ? ' (reset before the run)' : " (the agent's whole life)"}, ` +
      `${fmt(hostile.rssBeforeMb)} MB before, sampled VmRSS peak ${fmt(hostile.sampledPeakMb)} MB; ` +
      `idle: policy ${counted(hostile.idle.policy)}; SMTP AUTH ${counted(hostile.idle.sasl)}; milter ${counted(hostile.idle.milter)}; ` +
      `1 MB frames: ${counted(hostile.frameAnnouncers)}; header senders: ${counted(hostile.headerSenders)}, ` +
      `${fmt(hostile.headerSenders.bytesSentMb, 2)} MB written each on average; ${fmt(hostile.seconds, 1)} s`,
  );
  return allSigned ? result : { ...result, pass: false };
}

const ceilingFigure = (live: HttpRun) =>
  figure('health-live', 'GET /health/live ceiling', live.requestsPerSecond, 'req/s', {
    op: '>=',
    limit: 15_000,
  });

const verificationFigure = (verification: { perSecond: number }) =>
  figure(
    'access-token-verification',
    'access-token verification (jsonwebtoken, KeyObject)',
    verification.perSecond,
    '/s',
    { op: '>=', limit: 100_000 },
  );

/** Like the JWT route's: the ratio to the same run's ceiling. */
const apiKeyFigure = (run: HttpRun, live: HttpRun) =>
  figure(
    'api-key-read-ratio',
    'GET /api/v1/domains with a read API key (Bearer rk_…) ratio to ceiling',
    run.requestsPerSecond / live.requestsPerSecond,
    'ratio',
    { op: '>=', limit: 0.25 },
    `${fmt(run.requestsPerSecond)} req/s, p99 ${fmt(run.latencyMs.p99)} ms at ${CONNECTIONS} connections; one key per connection, each of its own company`,
  );

/** quality.md's export row: what streaming every record adds to the service's memory. */
function exportFigure(delivery: DeliveryFigures): Figure {
  return figure(
    'report-export-rss',
    'GET /reports/logs/export: resident memory growth while streaming',
    delivery.exportRssGrowthMb,
    'MB',
    { op: '<=', limit: 64 },
    `${fmt(delivery.exportRows)} rows in ${fmt(delivery.exportSeconds, 1)} s`,
  );
}

/**
 * quality.md's ingest and provider-event rows at 50 connections. The rates, ratios and the batch
 * p99 are PostgreSQL's budgets (information on SQLite, which is judged on answering every batch
 * within 10 s, and on memory).
 */
function fleetFigures(fleet: FleetFigures, live: HttpRun, kind: BenchDatabase['kind']): Figure[] {
  const pg = <T>(budget: T) => (kind === 'postgres' ? budget : null);
  const { ingest, events, bounces } = fleet;
  const answered = (run: FleetFigures['ingest']) =>
    `${fmt(run.batches)} batches in ${fmt(run.seconds, 1)} s, p50 ${fmt(run.latencyMs.p50)} ms, max ${fmt(run.latencyMs.max)} ms; ${run.refused} answered other than 200`;
  const cpu = (run: FleetFigures['ingest'], unit: string) =>
    (run.serviceCpuMicrosPerUnit === null
      ? ''
      : `; service CPU ${fmt(run.serviceCpuMicrosPerUnit, 1)} µs a ${unit}`) +
    (kind === 'postgres' && run.postgresCpuMicrosPerUnit !== null
      ? `, PostgreSQL's ${fmt(run.postgresCpuMicrosPerUnit, 1)} µs (its processes on this machine)`
      : '') +
    (run.machineBusy === null ? '' : `; the machine ${fmt(run.machineBusy * 100)} % busy`);
  /** A fleet run's rate, then the same as a ratio to the ceiling. */
  const rate = (
    id: string,
    name: string,
    run: FleetFigures['ingest'],
    unit: string,
    budgets: { perSecond: number; perCeiling: number },
    note: string,
  ) => [
    figure(id, name, run.perSecond, unit, pg({ op: '>=', limit: budgets.perSecond }), note),
    figure(
      `${id}-ratio`,
      `${name}: ${unit} per ceiling req/s`,
      run.perSecond / live.requestsPerSecond,
      'ratio',
      pg({ op: '>=', limit: budgets.perCeiling }),
    ),
  ];
  return [
    ...rate(
      'fleet-ingest-lines',
      `log ingest, 1,000-line batches from ${FLEET_CONNECTIONS} hosts at once`,
      ingest,
      'lines/s',
      { perSecond: BUDGET_FLEET_LINES_PER_SECOND, perCeiling: BUDGET_FLEET_LINES_PER_CEILING },
      `${fmt(ingest.units)} lines; 125 messages × 8 lines a batch (a busy company's 100), new queue ids every batch${FLEET_REPLICAS > 1 ? `; posted in turn to ${FLEET_REPLICAS} processes of the service (BENCH_FLEET_REPLICAS), their CPU summed` : ''}${cpu(ingest, 'line')}`,
    ),
    figure(
      'fleet-ingest-p99',
      'log ingest, a batch p99',
      ingest.latencyMs.p99,
      'ms',
      pg({ op: '<=', limit: BUDGET_FLEET_BATCH_P99_MS }),
      `${answered(ingest)}; ${fmt(FLEET_CONNECTIONS)} × ${fmt(LINES_PER_BATCH)} lines always in flight, so a batch's mean time is ${fmt((FLEET_CONNECTIONS * LINES_PER_BATCH) / ingest.perSecond, 2)} s at this rate (Little's law): the budget's p99 needs ≥ ${fmt(ratePerSecondForP99(BUDGET_FLEET_BATCH_P99_MS, FLEET_CONNECTIONS, LINES_PER_BATCH))} lines/s, ${fmt(ratePerSecondForP99(BUDGET_FLEET_BATCH_P99_MS, FLEET_CONNECTIONS, LINES_PER_BATCH) / live.requestsPerSecond, 2)} per ceiling request here`,
    ),
    figure(
      'fleet-batches-failed',
      // A 503 (stored, not applied) is retried by the shipper, but it is a batch the run did not take.
      `log batches and provider batches not answered 200 within ${BATCH_TIMEOUT_MS / 1000} s`,
      ingest.timeouts +
        ingest.refused +
        events.timeouts +
        events.refused +
        bounces.timeouts +
        bounces.refused,
      'batches',
      { op: '<=', limit: 0 },
    ),
    ...rate(
      'fleet-provider-events',
      `mail-provider events, batches of 100 on ${FLEET_CONNECTIONS} connections`,
      events,
      '/s',
      { perSecond: BUDGET_FLEET_EVENTS_PER_SECOND, perCeiling: BUDGET_FLEET_EVENTS_PER_CEILING },
      `${fmt(events.units)} SendGrid deliveries of the ingested mail; p99 ${fmt(events.latencyMs.p99)} ms; ${events.timeouts} timeouts, ${events.refused} answered other than 200${cpu(events, 'event')}`,
    ),
    figure(
      'fleet-provider-bounces',
      `mail-provider hard bounces, batches of 100 on ${FLEET_CONNECTIONS} connections, each suppressing its recipient`,
      bounces.perSecond,
      '/s',
      null,
      `${fmt(bounces.units)} SendGrid bounces of the delivered mail; p99 ${fmt(bounces.latencyMs.p99)} ms; ${bounces.timeouts} timeouts, ${bounces.refused} answered other than 200${cpu(bounces, 'event')}`,
    ),
    figure(
      'fleet-rss',
      'resident memory of the service during the fleet runs (sampled peak)',
      fleet.rssPeakMb,
      'MB',
      { op: '<=', limit: 300 },
    ),
  ];
}

/**
 * quality.md's event webhooks row: deliveries/s (the budget is PostgreSQL's: information only on
 * SQLite), failed too when a sampled signature does not verify or the deliveries stopped; the
 * p99 from an event's commit to its first attempt at the budget's rate; the same with one
 * endpoint answering in 10 s.
 */
function webhookFigures(hooks: WebhookFigures, kind: BenchDatabase['kind']): Figure[] {
  const { saturated, paced, slowEndpoint: slow, signatures } = hooks;
  const ms = (value: number | null) => (value === null ? 'n/a (not all made)' : `${fmt(value)} ms`);
  const run = (r: WebhookRun) =>
    `${fmt(r.deliveries)} of ${fmt(r.expected)} deliveries, ${fmt(r.events)} events posted at ${fmt(r.postedPerSecond)}/s, ` +
    (r.stalled ? `given up after ${fmt(r.seconds, 1)} s: ${r.stalled}` : `all in ${fmt(r.seconds, 1)} s`) +
    `; p50 ${ms(r.latencyMs.p50)}, max ${ms(r.latencyMs.max)}`;
  const notRun = 'not run: the run before it stalled';
  const rate = figure(
    'webhook-deliveries',
    `event webhooks: signed deliveries/s, ${hooks.endpoints} endpoints of ${hooks.companies} companies on a local receiver, events made by log batches`,
    saturated.deliveriesPerSecond,
    '/s',
    kind === 'postgres' ? { op: '>=', limit: BUDGET_DELIVERIES_PER_SECOND } : null,
    `${kind === 'postgres' ? '' : `PostgreSQL budget ≥ ${fmt(BUDGET_DELIVERIES_PER_SECOND)}/s; `}` +
      `${saturated.stalled ? 'over the whole run' : 'steady part (10 % to 90 % of the deliveries)'}; ` +
      `${run(saturated)}, p99 ${ms(saturated.latencyMs.p99)} as fast as the logs came; ` +
      `service CPU ${saturated.serviceCpuMicrosPerDelivery === null ? 'n/a' : `${fmt(saturated.serviceCpuMicrosPerDelivery)} µs`} a delivery (log ingest included); ` +
      `signatures verified with standardwebhooks: ${fmt(signatures.verified)} of ${fmt(signatures.verified + signatures.failed)} sampled` +
      (signatures.firstFailure ? ` (first failure: ${signatures.firstFailure})` : '') +
      `; ${fmt(hooks.repeatedAttempts)} repeated attempts`,
  );
  const paceNote =
    hooks.pace !== null && hooks.pace < BUDGET_DELIVERIES_PER_SECOND
      ? ` (${PACE_SHARE * 100} % of the rate reached, under the budget's ${fmt(BUDGET_DELIVERIES_PER_SECOND)}/s)`
      : '';
  return [
    signatures.failed || saturated.stalled ? { ...rate, pass: false } : rate,
    figure(
      'webhook-commit-to-attempt-p99',
      `event webhooks: commit to first attempt p99 at ${hooks.pace === null ? 'the budget rate' : `${fmt(hooks.pace)} events/s`}`,
      paced?.latencyMs.p99 ?? null,
      'ms',
      { op: '<=', limit: 1_000 },
      paced ? `${run(paced)}${paceNote}` : notRun,
    ),
    figure(
      'webhook-commit-to-attempt-p99-slow-endpoint',
      `event webhooks: the other endpoints' p99 while one answers in ${SLOW_ANSWER_MS / 1000} s, same rate`,
      slow?.latencyMs.p99 ?? null,
      'ms',
      { op: '<=', limit: 1_000 },
      slow && paced
        ? `${ms(paced.latencyMs.p99)} with every endpoint answering at once; ${run(slow)}; the slow endpoint got ${fmt(slow.slowAttempts)} attempts`
        : notRun,
    ),
  ];
}

/**
 * quality.md's sending-by-HTTP row: accepted/s and p99 at 50 connections (the budgets are
 * PostgreSQL's: information only on SQLite), the p99 with the posts paced at the budget's rate, the
 * worker's hand-over to Postfix beside swaks' (the ratio) and smtp-source's.
 */
function emailFigures(run: EmailFigures | { skipped: string }, kind: BenchDatabase['kind']): Figure[] {
  const skipped = 'skipped' in run ? `skipped: ${run.skipped}` : undefined;
  const r = 'skipped' in run ? undefined : run;
  const pg = (budget: NonNullable<Figure['budget']>) => (kind === 'postgres' ? budget : null);
  const onSqlite = (text: string) => (kind === 'postgres' ? '' : `PostgreSQL budget ${text}; `);
  const cpu = (micros: number | null | undefined, what: string) =>
    micros === null || micros === undefined ? '' : `; service CPU ${fmt(micros)} µs ${what}`;
  const meanwhile = (p: EmailFigures['accept']) =>
    `the worker handing them to Postfix meanwhile: ${fmt(p.backlogAtEnd)} of the ${fmt(p.stored)} stored still waiting when the posts ended, all handed over ${fmt(p.drainSeconds, 1)} s later`;
  const source = r && ('skipped' in r.smtpSource ? undefined : r.smtpSource);
  return [
    figure(
      'emails-accepted',
      `POST /api/v1/emails, one recipient, ${CONNECTIONS} connections, relay configured: accepted (stored)`,
      r?.accept.acceptedPerSecond ?? null,
      'msg/s',
      pg({ op: '>=', limit: BUDGET_ACCEPTED_PER_SECOND }),
      skipped ??
        `${onSqlite(`≥ ${BUDGET_ACCEPTED_PER_SECOND} msg/s`)}${fmt(r!.accept.requests)} in ${fmt(r!.accept.durationS)} s, one connection per company (${r!.companies}) with its sending key; ` +
          meanwhile(r!.accept) +
          cpu(r!.accept.serviceCpuMicrosPerRequest, 'a request (its share of the worker included)'),
    ),
    figure(
      'emails-accepted-p99',
      `POST /api/v1/emails p99 at ${CONNECTIONS} connections, as fast as they go`,
      r?.accept.latencyMs.p99 ?? null,
      'ms',
      null,
      skipped ??
        `p50 ${fmt(r!.accept.latencyMs.p50)} ms, p90 ${fmt(r!.accept.latencyMs.p90)} ms, max ${fmt(r!.accept.latencyMs.max)} ms`,
    ),
    figure(
      'emails-accepted-deferred',
      'POST /api/v1/emails scheduled an hour ahead (the HTTP path alone, nothing to hand over)',
      r?.deferred.acceptedPerSecond ?? null,
      'msg/s',
      null,
      skipped ??
        `p50 ${fmt(r!.deferred.latencyMs.p50)} ms, p90 ${fmt(r!.deferred.latencyMs.p90)} ms, p99 ${fmt(r!.deferred.latencyMs.p99)} ms, max ${fmt(r!.deferred.latencyMs.max)} ms at ${CONNECTIONS} connections` +
          cpu(r!.deferred.serviceCpuMicrosPerRequest, 'a request'),
    ),
    figure(
      'emails-accepted-p99-paced-alone',
      `POST /api/v1/emails p99 paced at ${BUDGET_ACCEPTED_PER_SECOND} msg/s, scheduled ahead (the HTTP path alone, nothing handed over)`,
      r?.deferredPaced.latencyMs.p99 ?? null,
      'ms',
      null,
      skipped ??
        `${fmt(r!.deferredPaced.acceptedPerSecond)} msg/s reached; p50 ${fmt(r!.deferredPaced.latencyMs.p50)} ms, p90 ${fmt(r!.deferredPaced.latencyMs.p90)} ms, max ${fmt(r!.deferredPaced.latencyMs.max)} ms` +
          cpu(r!.deferredPaced.serviceCpuMicrosPerRequest, 'a request'),
    ),
    figure(
      'emails-accepted-p99-paced',
      `POST /api/v1/emails p99 paced at ${BUDGET_ACCEPTED_PER_SECOND} msg/s over ${CONNECTIONS} connections`,
      r?.paced.latencyMs.p99 ?? null,
      'ms',
      null,
      skipped ??
        `${fmt(r!.paced.acceptedPerSecond)} msg/s reached; p50 ${fmt(r!.paced.latencyMs.p50)} ms, p90 ${fmt(r!.paced.latencyMs.p90)} ms, max ${fmt(r!.paced.latencyMs.max)} ms; ` +
          meanwhile(r!.paced) +
          cpu(r!.paced.serviceCpuMicrosPerRequest, 'a request'),
    ),
    figure(
      'emails-accepted-p99-apart',
      `POST /api/v1/emails p99 paced at ${BUDGET_ACCEPTED_PER_SECOND} msg/s over ${CONNECTIONS} connections to an API replica, the hand-over in another`,
      r?.pacedApart?.latencyMs.p99 ?? null,
      'ms',
      pg({ op: '<=', limit: 50 }),
      skipped ??
        (r!.pacedApart
          ? `${fmt(r!.pacedApart.acceptedPerSecond)} msg/s reached; p50 ${fmt(r!.pacedApart.latencyMs.p50)} ms, p90 ${fmt(r!.pacedApart.latencyMs.p90)} ms, max ${fmt(r!.pacedApart.latencyMs.max)} ms; ` +
            meanwhile(r!.pacedApart) +
            cpu(r!.pacedApart.serviceCpuMicrosPerRequest, 'a request (the replica)')
          : 'PostgreSQL only (replicas share the queue there; the embedded database keeps one process)'),
    ),
    figure(
      'emails-handover',
      "sending by HTTP: the service's worker handing stored messages to Postfix (AUTH with submission tokens)",
      r?.service.perSecond ?? null,
      'msg/s',
      null,
      skipped ??
        `${fmt(r!.service.messages)} messages made due at once, handed over in ${fmt(r!.service.seconds, 1)} s` +
          cpu(r!.service.serviceCpuMicrosPerMessage, 'a message') +
          `; ${r!.service.connectionsAtEnd} connections to Postfix open at the end; Postfix ${r!.postfix.version} (default_process_limit ${r!.postfix.processLimit}), the relay agent beside it (policy, SMTP AUTH, DKIM milter), next hop the discard transport`,
    ),
    figure(
      'emails-handover-swaks',
      'swaks submitting the same messages to the same Postfix and agent, same credentials',
      r?.swaks.perSecond ?? null,
      'msg/s',
      null,
      skipped ??
        `${fmt(r!.swaks.messages)} messages in ${fmt(r!.swaks.seconds, 1)} s, ${r!.swaks.processes} swaks processes at a time (smtp-source cannot AUTH), a connection each, AUTH PLAIN as the company's relay username with a submission token`,
    ),
    figure(
      'emails-handover-ratio',
      "sending by HTTP: the worker's hand-over ratio to swaks'",
      r ? r.service.perSecond / r.swaks.perSecond : null,
      'ratio',
      { op: '>=', limit: 0.8 },
      skipped,
    ),
    figure(
      'emails-handover-smtp-source',
      'smtp-source, the same number of messages without AUTH (the company by its network), sessions kept open',
      source?.perSecond ?? null,
      'msg/s',
      null,
      skipped ??
        (source
          ? `${fmt(source.messages)} in ${fmt(source.seconds, 1)} s over ${source.sessions} sessions: what Postfix and the agent take from a client that costs next to nothing; the worker's ratio to it ${fmt(r.service.perSecond / source.perSecond, 2)}`
          : (r!.smtpSource as { skipped: string }).skipped),
    ),
  ];
}

/**
 * quality.md's report rows (summary, logs) over the seeded records, and beside them the
 * deliverability reports of the same 30 days and the alert job over the same records.
 */
function reportFigures(reports: SeededReports, d: DeliverabilityFigures): Figure[] {
  const records = fmt(reports.records);
  const pct = (fraction: number) => `${fmt(fraction * 100, 1)} %`;
  const handedOver = (p: DeliverabilityFigures['providers'][number]) =>
    p.sent + p.deferred + p.bounced.hard + p.bounced.soft + p.bounced.block;
  const runs = d.jobRuns;
  return [
    figure(
      'report-summary-p95',
      `GET /reports/summary of 30 days, ${records} records (p95)`,
      reports.summaryP95Ms,
      'ms',
      { op: '<=', limit: 150 },
      `seeded in ${fmt(reports.seedSeconds, 1)} s, all of one company; recipients spread over the mailbox providers, ` +
        `the failures' bounce classes decided by the service's rules (${reports.seed.classified} distinct replies and destinations classified; rules ${reports.seed.rules.join(', ')})`,
    ),
    figure(
      'report-logs-p95',
      `GET /reports/logs first page, ${records} records (p95)`,
      reports.logsFirstPageP95Ms,
      'ms',
      { op: '<=', limit: 100 },
    ),
    figure(
      'reports-providers-p95',
      `GET /reports/providers of 30 days, ${records} records (p95)`,
      d.providersP95Ms,
      'ms',
      { op: '<=', limit: BUDGET_PROVIDERS_P95_MS },
      `p50 ${fmt(d.providersP50Ms, 1)} ms; budget: the summary's (quality.md has no row for this route), applied by analogy: same 30 days, same records; ` +
        `read from the hourly roll-up, ${fmt(d.rollUp.companyCells)} cells of the company for ${fmt(d.rollUp.companyRecords)} records; ` +
        d.providers
          .map(
            (p) =>
              `${p.provider} ${fmt(handedOver(p))} handed over, bounce rate ${pct(p.bounceRate)} (hard ${fmt(p.bounced.hard)}, block ${fmt(p.bounced.block)})`,
          )
          .join('; '),
    ),
    figure(
      'reports-bounce-categories-p95',
      `GET /reports/bounce-categories of 30 days, ${records} records (p95)`,
      d.bounceCategoriesP95Ms,
      'ms',
      null,
      `p50 ${fmt(d.bounceCategoriesP50Ms, 1)} ms; ${d.categories.length} categories: ` +
        d.categories
          .map((c) => `${c.category} ${c.type} ${fmt(c.count)} (${c.rule}${c.sampled ? '' : ', no sample'})`)
          .join('; '),
    ),
    figure(
      'deliverability-alerts-job',
      `deliverability-alerts job over ${fmt(d.rollUp.records)} records, worst of ${JOB_RUNS} runs (GET /api/v1/t3st-job)`,
      d.maxJobWallMs,
      'ms',
      { op: '<=', limit: BUDGET_ALERT_JOB_MS },
      `budget: "within a few seconds"; ${fmt(d.rollUp.records)} records in the roll-up (${records} seeded), ${fmt(d.rollUp.records7d)} of them in the 7-day window ` +
        `(${fmt(d.rollUp.cells7d)} roll-up cells read), ${fmt(d.unclassifiedBefore)} records without a provider for its backfill; ` +
        `run by a superAdmin made with dist/cli/admin-create.js; as timed by the bench ${runs.map((r) => fmt(r.wallMs)).join(', ')} ms, ` +
        `by the job itself ${runs.map((r) => fmt(r.jobMs)).join(', ')} ms (max ${fmt(d.maxJobMs)} ms); alerts opened, raised or resolved: ${runs.map((r) => r.affected).join(', ')}; ` +
        `open after: ${d.openAlerts.length ? d.openAlerts.join(', ') : 'none'}` +
        (d.jobSkipped ? `; ${d.jobSkipped} runs skipped (already running)` : ''),
    ),
  ];
}

/** The delivery-data run's options: the service's inbound credentials, one user's token, the figures' sizes. */
function deliveryDataOptions(token: string) {
  return {
    logShipperKey: LOG_SHIPPER_API_KEY,
    webhookUser: WEBHOOK_USER,
    webhookPassword: WEBHOOK_PASSWORD,
    token,
    seconds: DURATION_S,
    records: RECORDS,
  };
}

function printPhases(watch: ServiceWatch): void {
  console.log(
    "\nphase by phase: event-loop delay max, sampled RSS peak, and at the phase's end V8 heap used/total and external (MB)",
  );
  for (const p of watch.phases)
    console.log(
      `  ${fmt(p.maxMs)} ms · RSS ${fmt(p.rssPeakMb ?? NaN)} · heap ${fmt(p.memoryMb.heapUsed)}/${fmt(p.memoryMb.heapTotal)} · external ${fmt(p.memoryMb.external)} · ${p.during}`,
    );
}

const tableHeader = (machine: { date: string; node: string; cpus: number; cpuModel: string }, kind: string) =>
  `bench ${machine.date} · node ${machine.node} · ${machine.cpus} CPUs (${machine.cpuModel}) · ` +
  `database ${kind} · LOG_LEVEL=${LOG_LEVEL} · ${CONNECTIONS} connections, ${DURATION_S} s per route, ` +
  `${AGENT_DURATION_S} s per relay-agent figure`;

/** The share of the answers the service timed at `ms` or less (a bound of its histogram). */
const serviceTimedShare = (timed: { total: number; atMostMs: Record<string, number> }, ms: number) =>
  timed.total ? `${fmt((100 * (timed.atMostMs[String(ms)] ?? 0)) / timed.total, 2)} %` : 'n/a';

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function printTable(figures: Figure[], header: string): void {
  const cell = (f: Figure) => {
    const digits = f.unit === 'ratio' ? 2 : f.unit === 'ms' || f.unit === 's' ? 1 : 0;
    const unit = f.unit === 'ratio' ? '' : ` ${f.unit}`;
    return {
      figure: f.figure,
      value: f.value === null ? 'n/a' : `${fmt(f.value, digits)}${unit}`,
      budget: f.budget ? `${f.budget.op === '>=' ? '≥' : '≤'} ${fmt(f.budget.limit, digits)}${unit}` : '-',
      result: f.pass === null ? 'info' : f.pass ? 'pass' : 'FAIL',
    };
  };
  const rows = [
    { figure: 'figure', value: 'value', budget: 'budget', result: 'result' },
    ...figures.map(cell),
  ];
  const widths = (['figure', 'value', 'budget'] as const).map((k) =>
    Math.max(...rows.map((r) => r[k].length)),
  );
  const line = (r: (typeof rows)[number]) =>
    `| ${r.figure.padEnd(widths[0])} | ${r.value.padStart(widths[1])} | ${r.budget.padStart(widths[2])} | ${r.result.padEnd(6)} |`;
  const rule = `|${'-'.repeat(widths[0] + 2)}|${'-'.repeat(widths[1] + 2)}|${'-'.repeat(widths[2] + 2)}|--------|`;
  console.log(`\n${header}\n`);
  console.log(line(rows[0]));
  console.log(rule);
  for (const r of rows.slice(1)) console.log(line(r));
  for (const f of figures.filter((x) => x.note)) console.log(`  ${f.figure}: ${f.note}`);
}

async function main(): Promise<void> {
  const machine = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    platform: `${process.platform} ${process.arch}`,
    /** 1-minute load average at the start: other work on the machine skews the HTTP figures. */
    loadAverage: Number(loadavg()[0].toFixed(2)),
  };

  const unknown = ONLY.filter((phase) => !(ONLY_PHASES as readonly string[]).includes(phase));
  if (unknown.length)
    throw new Error(`BENCH_ONLY: unknown ${unknown.join(', ')} (known: ${ONLY_PHASES.join(', ')})`);

  console.log(`access-token verification, ${JWT_SECONDS} s in-process…`);
  const verification = measureTokenVerification();

  const db = await benchDatabase();
  let service: RunningService | undefined;
  // Sending by HTTP: the port of RELAY_SUBMIT_URL, held until the row starts Postfix on it.
  const emailsRow = !ONLY.length || ONLY.includes('emails');
  const emailsAvailable = emailsRow ? emailsBenchAvailable() : undefined;
  const relayPort: HeldPort | undefined = emailsAvailable?.ok ? await holdPort() : undefined;
  try {
    console.log(`starting dist/main.js on ${db.kind}…`);
    const serviceEnv: Record<string, string> = {
      NODE_ENV: 'development',
      LOG_LEVEL,
      ...db.env,
      ...SECRETS,
      ENCRYPTION_KEY,
      // The default 60 s would expire mid-run.
      JWT_ACCESS_TTL: '1h',
      // The limiter still runs on every request (counts, compares); it just never trips.
      RATE_LIMIT_PER_MINUTE: '1000000000',
      LOGIN_RATE_LIMIT_PER_MINUTE: '1000000000',
      API_KEY_RATE_LIMIT_PER_MINUTE: '1000000000',
      // The webhook receiver is on loopback (http:// is allowed outside production).
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      // No outside services: e-mails go to the log, counters stay in memory.
      SMTP_URL: '',
      REDIS_URL: '',
      APP_URL: 'http://localhost:5173',
      INTERNAL_API_KEY,
      LOG_SHIPPER_API_KEY,
      MAIL_PROVIDER_WEBHOOK_USER: WEBHOOK_USER,
      MAIL_PROVIDER_WEBHOOK_PASSWORD: WEBHOOK_PASSWORD,
      METRICS_TOKEN,
      ...(relayPort && {
        RELAY_SUBMIT_URL: `smtp://127.0.0.1:${relayPort.port}`,
        RELAY_SUBMIT_SECRET,
      }),
      ...(process.env.RELAY_SUBMIT_CONCURRENCY && {
        RELAY_SUBMIT_CONCURRENCY: process.env.RELAY_SUBMIT_CONCURRENCY,
      }),
    };
    service = await startService(serviceEnv);
    /** quality.md's sending-by-HTTP row, or why it was skipped. */
    const sendByHttp = async (): Promise<EmailFigures | { skipped: string }> => {
      if (!relayPort)
        return { skipped: emailsAvailable && !emailsAvailable.ok ? emailsAvailable.why : 'not run' };
      return measureEmails(service!, watch, db, {
        tokens,
        encryptionKey: ENCRYPTION_KEY,
        submitSecret: RELAY_SUBMIT_SECRET,
        relayPort,
        agentEnv: { NODE_ENV: 'development', LOG_LEVEL, ...db.env, ...SECRETS, ENCRYPTION_KEY },
        connections: CONNECTIONS,
        seconds: DURATION_S,
        warmupS: WARMUP_S,
        ...(db.kind === 'postgres' && {
          startApiReplica: () => startService({ ...serviceEnv, EMAIL_SUBMITTER: 'false' }),
        }),
      });
    };
    /** quality.md's ingest and provider-event rows at a fleet's concurrency. */
    const fleetRun = async (): Promise<FleetFigures> => {
      console.log(
        `log ingest from ${FLEET_CONNECTIONS} hosts at once (1,000-line batches), then provider events on ${FLEET_CONNECTIONS} connections, ${DURATION_S} s each…`,
      );
      const companies = await Promise.all(tokens.map((token) => companyOf(service!, db, token)));
      const replicas = await Promise.all(
        Array.from({ length: FLEET_REPLICAS - 1 }, () => startService(serviceEnv)),
      );
      try {
        return await measureFleet(service!, watch, {
          db,
          logShipperKey: LOG_SHIPPER_API_KEY,
          webhookUser: WEBHOOK_USER,
          webhookPassword: WEBHOOK_PASSWORD,
          busyRelayUsername: companies[0].relayUsername,
          relayUsernames: companies.slice(1).map((c) => c.relayUsername),
          seconds: DURATION_S,
          warmupS: WARMUP_S,
          replicas,
        });
      } finally {
        await Promise.all(replicas.map((r) => r.stop()));
      }
    };
    // The service's event-loop delay and RSS, phase by phase, from the first request on.
    const watch = new ServiceWatch(service);
    await watch.start();
    const tokens = await userTokens(service, db, CONNECTIONS);
    await watch.mark(`${CONNECTIONS} users registered and logged in (argon2)`);

    const rss = new RssSampler(service.pid);
    rss.start();
    console.log(`GET /health/live: ${WARMUP_S} s warm-up, ${DURATION_S} s at ${CONNECTIONS} connections…`);
    const live = await measureHttp(service, '/health/live');
    await watch.mark('GET /health/live');
    if (ONLY.length) {
      rss.stop();
      const only: Figure[] = [verificationFigure(verification), ceilingFigure(live)];
      if (ONLY.includes('api-key')) {
        console.log(
          `GET /api/v1/domains with API keys: ${WARMUP_S} s warm-up, ${DURATION_S} s at ${CONNECTIONS} connections…`,
        );
        only.push(apiKeyFigure(await measureApiKeyRead(service, tokens), live));
      }
      if (ONLY.includes('delivery')) {
        console.log(`delivery data: ingest and provider events ${DURATION_S} s each…`);
        only.push(
          exportFigure(await measureDeliveryData(service, watch, db, deliveryDataOptions(tokens[0]))),
        );
      }
      if (ONLY.includes('fleet')) only.push(...fleetFigures(await fleetRun(), live, db.kind));
      // Before the webhooks: their endpoints would get the alerts' deliverability.alert events.
      if (ONLY.includes('reports')) {
        console.log(
          `${fmt(RECORDS)} clean records seeded for the reports, then the reports and the alert job…`,
        );
        const company = await companyOf(service, db, tokens[0]);
        const reports = await seedAndTimeReports(service, watch, db, {
          token: tokens[0],
          companyId: company.id,
          companyUuid: company.uuid,
          records: RECORDS,
        });
        const deliverability = await measureDeliverability(service, watch, db, {
          token: tokens[0],
          companyId: company.id,
          serviceEnv,
        });
        only.push(...reportFigures(reports, deliverability));
      }
      // Before the webhooks: their endpoints would get the worker's email.queued events.
      if (ONLY.includes('emails')) only.push(...emailFigures(await sendByHttp(), db.kind));
      if (ONLY.includes('webhooks')) {
        const hooks = await measureWebhooks(service, watch, db, {
          tokens,
          logShipperKey: LOG_SHIPPER_API_KEY,
        });
        only.push(...webhookFigures(hooks, db.kind));
      }
      watch.stop();
      printTable(only, `${tableHeader(machine, db.kind)} · BENCH_ONLY=${ONLY.join(',')}`);
      printPhases(watch);
      return;
    }
    console.log(
      `GET /api/v1/users/me: ${WARMUP_S} s warm-up, ${DURATION_S} s at ${CONNECTIONS} connections…`,
    );
    const me = await measureHttp(
      service,
      '/api/v1/users/me',
      tokens.map((token) => ({ authorization: `Bearer ${token}` })),
    );
    await watch.mark('GET /api/v1/users/me');
    console.log(
      `GET /api/v1/domains with API keys: ${WARMUP_S} s warm-up, ${DURATION_S} s at ${CONNECTIONS} connections…`,
    );
    const keyRead = await measureApiKeyRead(service, tokens);
    console.log('seeding 10,000 companies and 20,000 suppression entries…');
    await watch.mark('GET /api/v1/domains with API keys');
    const relayData = await seedRelayData(db);
    await watch.mark(IDLE_RELAY_SEED);
    console.log(
      `POST /api/internal/relay-status: ${WARMUP_S} s warm-up, ${DURATION_S} s at ${CONNECTIONS} connections…`,
    );
    const relayHeaders = [{ 'content-type': 'application/json', 'x-api-key': INTERNAL_API_KEY }];
    // As relays send: each connection for its own company, so the 5 s per-company cache serves
    // the company and domain lookups; the suppression lookup runs for every request.
    const relay = await measureHttp(
      service,
      '/api/internal/relay-status',
      relayHeaders,
      Array.from({ length: CONNECTIONS }, (_, i) => relayQuery(relayData, i)),
    );
    await watch.mark('POST /api/internal/relay-status');
    console.log(`POST /api/internal/relay-status, every company in turn: ${DURATION_S} s…`);
    // The worst case: the 10,000 companies in turn, so every request misses the cache.
    const relayCold = await measureHttp(
      service,
      '/api/internal/relay-status',
      relayHeaders,
      Array.from({ length: relayData.relayUsernames.length }, (_, i) => relayQuery(relayData, i)),
    );
    await watch.mark('POST /api/internal/relay-status, no cache hit');
    console.log(`POST /api/internal/relay-status, companies by client address: ${DURATION_S} s…`);
    // Relays that do not authenticate: the company is found by its allowed network among 10,000.
    const byAddress = await api<{ companyUuid: string | null }>(
      service.baseUrl,
      'POST',
      '/api/internal/relay-status',
      JSON.parse(relayQueryByAddress(relayData, 0)),
      200,
      relayHeaders[0],
    );
    if (!byAddress.companyUuid) throw new Error('relay-status by client address: no company found');
    const relayByAddress = await measureHttp(
      service,
      '/api/internal/relay-status',
      relayHeaders,
      Array.from({ length: CONNECTIONS }, (_, i) => relayQueryByAddress(relayData, i)),
    );
    rss.stop();
    await watch.mark('POST /api/internal/relay-status by client address');
    const agent = await measureRelayAgent(db, relayData);
    await watch.mark(IDLE_AGENT);
    console.log(
      `delivery data: ingest and provider events ${DURATION_S} s each, then ${fmt(RECORDS)} clean records seeded for the reports…`,
    );
    const delivery = await measureDeliveryData(service, watch, db, deliveryDataOptions(tokens[0]));
    const fleet = await fleetRun();
    console.log('the providers and bounce-categories reports, and the deliverability-alerts job…');
    const deliverability = await measureDeliverability(service, watch, db, {
      token: tokens[0],
      companyId: (await companyOf(service, db, tokens[0])).id,
      serviceEnv,
    });
    console.log(
      `the export of ${fmt(RECORDS)} records and ${QUEUE_BATCHES} log batches of one queue at once, relay-status on ${HEAVY_RELAY_CONNECTIONS} connections meanwhile…`,
    );
    const heavy = await measureHeavyRequests(service, watch, {
      token: tokens[0],
      logShipperKey: LOG_SHIPPER_API_KEY,
      relayUsername: relayData.relayUsernames[relayData.relayUsernames.length - 1],
      relayHeaders: relayHeaders[0],
      relayBodies: Array.from({ length: HEAVY_RELAY_CONNECTIONS }, (_, i) => relayQuery(relayData, i)),
      relayConnections: HEAVY_RELAY_CONNECTIONS,
      metricsToken: METRICS_TOKEN,
    });
    if (heavy.relayStatus.non2xx || heavy.relayStatus.errors)
      throw new Error(
        `relay-status during the heavy requests: ${heavy.relayStatus.non2xx} non-2xx answers and ${heavy.relayStatus.errors} errors`,
      );
    console.log('hostile 1 MB bodies, each refused 10 times in a row…');
    const hostile = await measureHostileBodies(service);
    await watch.mark('hostile bodies');
    const emails = await sendByHttp();
    // Last: from here on the companies' sent mail makes webhook events.
    const hooks = await measureWebhooks(service, watch, db, { tokens, logShipperKey: LOG_SHIPPER_API_KEY });
    watch.stop();
    const loops = watch.phases.filter((p) => !IDLE_PHASES.includes(p.during));
    const worstLoop = loops.reduce((a, b) => (b.maxMs > a.maxMs ? b : a));
    const worstRss = watch.phases.reduce((a, b) => ((b.rssPeakMb ?? 0) > (a.rssPeakMb ?? 0) ? b : a));
    const worstBody = hostile.reduce((a, b) => (b.worstMs > a.worstMs ? b : a));
    const lifetimePeak = residentBytes(service.pid, 'VmHWM');
    const peakRss = rss.peak();

    const figures: Figure[] = [
      verificationFigure(verification),
      ceilingFigure(live),
      figure('users-me', 'GET /api/v1/users/me', me.requestsPerSecond, 'req/s', null),
      figure(
        'users-me-ratio',
        'GET /api/v1/users/me ratio to ceiling',
        me.requestsPerSecond / live.requestsPerSecond,
        'ratio',
        {
          op: '>=',
          limit: 0.25,
        },
      ),
      figure(
        'users-me-p99',
        `GET /api/v1/users/me p99 at ${CONNECTIONS} connections`,
        me.latencyMs.p99,
        'ms',
        {
          op: '<=',
          limit: 25,
        },
      ),
      apiKeyFigure(keyRead, live),
      figure(
        'relay-status-ratio',
        'POST /api/internal/relay-status ratio to ceiling',
        relay.requestsPerSecond / live.requestsPerSecond,
        'ratio',
        { op: '>=', limit: 0.3 },
        `${fmt(relay.requestsPerSecond)} req/s; one company per connection among 10,000 companies and 20,000 suppression entries, 3 recipients a request`,
      ),
      figure(
        'relay-status-p99',
        `POST /api/internal/relay-status p99 at ${CONNECTIONS} connections`,
        relay.latencyMs.p99,
        'ms',
        { op: '<=', limit: 20 },
      ),
      figure(
        'relay-status-cold',
        'POST /api/internal/relay-status, 10,000 companies in turn (no cache hit)',
        relayCold.requestsPerSecond,
        'req/s',
        null,
        `p99 ${fmt(relayCold.latencyMs.p99)} ms`,
      ),
      figure(
        'relay-status-by-address',
        'POST /api/internal/relay-status, company by client address (10,000 allowed networks)',
        relayByAddress.requestsPerSecond,
        'req/s',
        null,
        `p99 ${fmt(relayByAddress.latencyMs.p99)} ms`,
      ),
      ...relayAgentFigures(agent),
      figure(
        'ingest-lines',
        'log ingest, batches of 1,000 lines (two in flight)',
        delivery.ingestLinesPerSecond,
        'lines/s',
        null,
        `${fmt(delivery.ingestLines)} lines in ${DURATION_S} s; five lines a message, each a clean record (quality.md's row is the fleet's, below)`,
      ),
      figure(
        'provider-events',
        'mail-provider events, batches of 100 (two in flight)',
        delivery.providerEventsPerSecond,
        '/s',
        null,
        `${fmt(delivery.providerEvents)} SendGrid deliveries, each matched to its record`,
      ),
      figure(
        'provider-events-waiting',
        'mail-provider events before their messages, batches of 100 (50 connections)',
        delivery.waitingEventsPerSecond,
        '/s',
        { op: '>=', limit: 5_000 },
        `${fmt(delivery.waitingEvents)} stored to wait for their log lines`,
      ),
      figure(
        'ingest-lines-matching-waiting',
        'log ingest of the messages whose events waited (two in flight)',
        delivery.matchingIngestLinesPerSecond,
        'lines/s',
        { op: '>=', limit: 20_000 },
        `${fmt(delivery.waitingEventsApplied)} waiting events applied as their lines came`,
      ),
      ...fleetFigures(fleet, live, db.kind),
      ...emailFigures(emails, db.kind),
      ...webhookFigures(hooks, db.kind),
      ...reportFigures(delivery, deliverability),
      exportFigure(delivery),
      figure(
        'rss-peak',
        'resident memory of node dist/main.js, from start through every HTTP run (VmHWM)',
        lifetimePeak === undefined ? null : lifetimePeak / MB,
        'MB',
        { op: '<=', limit: 300 },
        lifetimePeak === undefined
          ? 'no /proc on this platform'
          : `started as a user runs it (no MALLOC_* or NODE_OPTIONS); sampled peak ${fmt(worstRss.rssPeakMb ?? NaN)} MB during ${worstRss.during}, ${peakRss === undefined ? 'n/a' : fmt(peakRss / MB)} MB during the first routes (health, users/me, domains with API keys, relay-status)`,
      ),
      figure(
        'event-loop-max-delay',
        'event-loop delay (monitorEventLoopDelay), max over every HTTP run',
        worstLoop.maxMs,
        'ms',
        { op: '<=', limit: EVENT_LOOP_BOUND_MS[db.kind] },
        `worst during ${worstLoop.during}; ` +
          loops.map((l) => `${l.during}: max ${fmt(l.maxMs)} ms, p99 ${fmt(l.p99Ms)} ms`).join('; ') +
          ` (resolution ${EVENT_LOOP_RESOLUTION_MS} ms; a timer turn late by a busy CPU counts too: load average ${machine.loadAverage} at start)`,
      ),
      figure(
        'relay-status-p99-heavy',
        `POST /api/internal/relay-status p99 at ${HEAVY_RELAY_CONNECTIONS} connections during the export and the ${QUEUE_BATCHES} batches`,
        heavy.relayStatus.p99Ms,
        'ms',
        { op: '<=', limit: HEAVY_RELAY_STATUS_P99_MS[db.kind] },
        `${fmt(heavy.relayStatus.requests)} requests, max ${fmt(heavy.relayStatus.maxMs)} ms; as the service timed them (read to written): ${serviceTimedShare(heavy.relayStatus.serviceTimed, 50)} within 50 ms, ${serviceTimedShare(heavy.relayStatus.serviceTimed, 25)} within 25 ms; ${fmt(heavy.exportRows)} rows exported in ${fmt(heavy.exportSeconds, 1)} s, ${fmt(heavy.queueLines)} lines of one queue stored in ${fmt(heavy.queueSeconds, 1)} s`,
      ),
      figure(
        'worst-case-body-refused',
        'worst-case 1 MB body refused (slowest request)',
        worstBody.worstMs,
        'ms',
        { op: '<=', limit: 100 },
        `${worstBody.name}; service CPU ${fmt(worstBody.serviceCpuMsPerRequest ?? NaN, 1)} ms a request`,
      ),
      figure('start-to-ready', `start to ready (${db.kind})`, service.readyMs / 1000, 's', {
        op: '<=',
        limit: 3,
      }),
    ];

    printTable(figures, tableHeader(machine, db.kind));
    printPhases(watch);
    const cpu = (r: HttpRun) =>
      r.serviceCpuMicrosPerRequest === null ? 'n/a' : `${fmt(r.serviceCpuMicrosPerRequest)} µs`;
    console.log(
      `\nload average at start ${machine.loadAverage} on ${machine.cpus} CPUs; service CPU per request ` +
        `(user + system; less sensitive to other load than req/s): /health/live ${cpu(live)}, /api/v1/users/me ${cpu(me)}, /api/v1/domains with an API key ${cpu(keyRead)}, /api/internal/relay-status ${cpu(relay)} (${cpu(relayCold)} with no cache hit, ${cpu(relayByAddress)} by client address)`,
    );

    const results = {
      ...machine,
      database: db.kind,
      logLevel: LOG_LEVEL,
      connections: CONNECTIONS,
      durationS: DURATION_S,
      agentDurationS: AGENT_DURATION_S,
      warmupS: WARMUP_S,
      figures,
      details: {
        tokenVerification: { ...verification, seconds: JWT_SECONDS },
        http: { live, me, apiKeyRead: keyRead, relay, relayCold, relayByAddress },
        delivery,
        fleet,
        deliverability,
        webhooks: hooks,
        emails,
        relayAgent: agent,
        hostileBodies: hostile,
        phases: watch.phases,
        heavyRequests: heavy,
        rss: {
          peakDuringRunsMb: peakRss === undefined ? null : peakRss / MB,
          lifetimePeakMb: lifetimePeak && lifetimePeak / MB,
        },
        startToReadyMs: service.readyMs,
      },
    };
    const dir = join(__dirname, 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
    console.log(`\nwritten to bench/results/latest.json`);
  } finally {
    await service?.stop();
    await relayPort?.release();
    await db.drop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
