import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/**
 * The process's metrics (`GET /metrics` on the API, and on the relay agent's HTTP listener), in
 * one registry of this service's own rather than prom-client's global one, so nothing a library
 * registers there is exposed by accident. The counters are module-level objects: an area imports
 * the one it moves and increments it (a label lookup and an addition: cheap on any hot path).
 * One process runs one API or one relay agent; several in one process (the e2e tests) share
 * these counters, so a test reads how much a series moved, never its absolute value.
 *
 * What is computed when scraped (stored but unapplied inbound events, the database pool) is not
 * here: it belongs to one application's database, see MetricsService.
 *
 * Labels hold closed sets only (route patterns, Postfix actions, reasons, job names, event
 * types): never a path, an address, a username or anything else a client chooses.
 */
export const METRICS_REGISTRY = new Registry();

const registers = [METRICS_REGISTRY];

/** Requests by method, route pattern (`/api/v1/companies/:uuid`, never the path) and status. */
export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP requests by method, route pattern and status, and how long they took',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers,
});

/** Relay decisions (policy service and `POST /internal/relay-status`) by Postfix action and reason. */
export const relayDecisions = new Counter({
  name: 'relay_decisions_total',
  help: 'Relay decisions by Postfix action (OK, REJECT, DEFER_IF_PERMIT) and reason',
  labelNames: ['action', 'reason'] as const,
  registers,
});

/** SMTP AUTH attempts: `success`, `failure` (wrong credentials), `blocked` (address over its failures). */
export const smtpAuthAttempts = new Counter({
  name: 'smtp_auth_attempts_total',
  help: 'SMTP AUTH attempts by result: success, failure, blocked (refused unchecked: too many failures from the address)',
  labelNames: ['result'] as const,
  registers,
});

/** Client addresses that reached the failure limit (each time one does). */
export const smtpAuthBlockedAddresses = new Counter({
  name: 'smtp_auth_blocked_addresses_total',
  help: 'Client addresses blocked from SMTP AUTH after too many failures',
  registers,
});

/** What the milter did with each message: signed, accepted unsigned, refused (with reason), tempfailed. */
export const milterMessages = new Counter({
  name: 'milter_messages_total',
  help: 'Messages through the milter by outcome (signed, accepted, refused, tempfailed) and refusal reason',
  labelNames: ['outcome', 'reason'] as const,
  registers,
});

/** Shipped Postfix log lines, by whether they were parsed or skipped. */
export const logLinesIngested = new Counter({
  name: 'log_lines_ingested_total',
  help: 'Shipped Postfix log lines received in applied batches, by result (parsed, skipped)',
  labelNames: ['result'] as const,
  registers,
});

/** Clean records created or changed by shipped log batches. */
export const logRecordsIngested = new Counter({
  name: 'log_records_ingested_total',
  help: 'Clean delivery records created or changed by shipped log batches',
  registers,
});

/** A log batch applied at once (a copy already stored counts nothing; one the retry job applies neither). */
export function countLogBatch(batch: { parsed: number; skipped: number; records: number }): void {
  logLinesIngested.inc({ result: 'parsed' }, batch.parsed);
  logLinesIngested.inc({ result: 'skipped' }, batch.skipped);
  logRecordsIngested.inc(batch.records);
}

/** Mail-provider events applied, by normalised type (delivered, bounce, complaint, …). */
export const providerEvents = new Counter({
  name: 'provider_events_total',
  help: 'Mail-provider events stored and applied, by type',
  labelNames: ['type'] as const,
  registers,
});

/** Scheduled job runs by job and result (`ok`, `failed`, `skipped`: another replica held it). */
export const jobRuns = new Counter({
  name: 'job_runs_total',
  help: 'Scheduled job runs by job and result (ok, failed, skipped)',
  labelNames: ['job', 'result'] as const,
  registers,
});

let processMetricsStarted = false;

/**
 * Memory, CPU, handles and event-loop delay (prom-client's defaults: `process_resident_memory_bytes`,
 * `nodejs_heap_size_used_bytes`, `nodejs_eventloop_lag_p99_seconds` from
 * `perf_hooks.monitorEventLoopDelay`, …), started once per process, by the first application
 * that serves metrics.
 */
export function startProcessMetrics(): void {
  if (processMetricsStarted) return;
  processMetricsStarted = true;
  collectDefaultMetrics({ register: METRICS_REGISTRY, eventLoopMonitoringPrecision: 10 });
}
