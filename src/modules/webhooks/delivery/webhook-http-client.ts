import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { isNativeError } from 'node:util/types';
import { Agent, buildConnector } from 'undici';
import { parseRetryAfter } from './retry-schedule';
import { checkWebhookUrlSyntax, isPublicAddress, systemLookup, type WebhookLookup } from './webhook-target';

/** How long one attempt may take, from connecting to the answer's status and first bytes. */
export const WEBHOOK_TIMEOUT_MS = 15_000;

/** How much of an answer's body an attempt keeps (and reads). */
export const KEPT_ANSWER_BYTES = 1024;

/** What one attempt to deliver an event came to. */
export interface AttemptResult {
  /** When the attempt started. */
  at: Date;
  /** How long it took, in milliseconds. */
  ms: number;
  /** The answer's HTTP status, when there was an answer. */
  status?: number;
  /** Why there was no answer (network error, timeout, refused address). */
  error?: string;
  /** The first 1 KB of the answer's body. */
  body: string;
  /** `gone` is a 410: the receiver asks for its endpoint to be disabled. */
  outcome: 'delivered' | 'failed' | 'gone';
  /** The wait a 429 or 503 asked for with Retry-After, capped at 1 hour. */
  retryAfterMs?: number;
}

/** How the client reaches receivers. */
export interface WebhookHttpClientOptions {
  /** Whether http:// URLs are sent to besides https:// ones. */
  allowHttp: boolean;
  /** Whether loopback, private and other non-public addresses may be connected to. */
  allowPrivateTargets: boolean;
  /** The time limit of one attempt; 15 s when absent. */
  timeoutMs?: number;
  /** How host names are resolved; the system resolver when absent. */
  lookup?: WebhookLookup;
}

/** A connection refused because the address it would go to is not public. */
export class RefusedAddressError extends Error {
  constructor(readonly address: string) {
    super(`address ${address} is not public`);
    this.name = 'RefusedAddressError';
  }
}

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net.connect that resolves once, refuses the whole host when any of its addresses is
 * not public, and hands net exactly the addresses it checked, so DNS rebinding cannot reach inside.
 */
function checkedLookup(resolve: WebhookLookup, allowPrivateTargets: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname).then(
      (resolved) => {
        const refused = allowPrivateTargets
          ? undefined
          : resolved.find((entry) => !isPublicAddress(entry.address));
        const addresses = resolved.filter((entry) => !options.family || entry.family === options.family);
        if (refused) {
          callback(new RefusedAddressError(refused.address), '');
        } else if (addresses.length === 0) {
          callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
        } else if (options.all) {
          callback(null, addresses);
        } else {
          callback(null, addresses[0].address, addresses[0].family);
        }
      },
      (error: Error) => callback(error, ''),
    );
  };
}

/** A connector that checks the address of every new connection (net skips `lookup` for IP literals). */
function checkedConnector(options: WebhookHttpClientOptions, timeoutMs: number): buildConnector.connector {
  const connect = buildConnector({
    lookup: checkedLookup(options.lookup ?? systemLookup, options.allowPrivateTargets),
    timeout: timeoutMs,
  });
  return (connectOptions, callback) => {
    const host = connectOptions.hostname.replace(/^\[(.*)\]$/, '$1');
    if (!options.allowPrivateTargets && isIP(host) && !isPublicAddress(host)) {
      callback(new RefusedAddressError(host), null);
      return;
    }
    connect(connectOptions, callback);
  };
}

/** Reads at most `limit` bytes of a stream, then destroys it; what arrived before an error is kept. */
async function readAtMost(stream: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    // Leaving the loop early destroys the stream, so the rest of a large answer is never read.
    for await (const chunk of stream) {
      const buffer = chunk as Buffer;
      chunks.push(buffer);
      size += buffer.length;
      if (size >= limit) break;
    }
  } catch {
    // The answer's body is kept for information only; a failure while reading it changes nothing.
  }
  return Buffer.concat(chunks).subarray(0, limit);
}

function describeError(error: unknown): string {
  // isNativeError, not instanceof: a socket's error may come from another realm (as under jest).
  if (!isNativeError(error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  return error.message || error.name;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function outcomeOf(status: number): AttemptResult['outcome'] {
  if (status >= 200 && status < 300) return 'delivered';
  return status === 410 ? 'gone' : 'failed';
}

/**
 * Sends webhook requests: one keep-alive connection pool per origin, no redirects followed, a time
 * limit per attempt, at most 1 KB of each answer read, and only public addresses connected to
 * (unless private targets are allowed).
 */
export class WebhookHttpClient {
  private readonly agent: Agent;
  private readonly timeoutMs: number;

  constructor(private readonly options: WebhookHttpClientOptions) {
    this.timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
    this.agent = new Agent({ connect: checkedConnector(options, this.timeoutMs) });
  }

  /** POSTs one attempt; a network problem is reported in the result, never thrown. */
  async send(url: string, headers: Record<string, string>, body: string): Promise<AttemptResult> {
    const at = new Date();
    const started = performance.now();
    const elapsedMs = () => Math.round(performance.now() - started);
    const checked = checkWebhookUrlSyntax(url, this.options);
    if (!checked.ok) return { at, ms: elapsedMs(), error: checked.reason, body: '', outcome: 'failed' };

    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.timeoutMs);
    try {
      const response = await this.agent.request({
        origin: checked.url.origin,
        path: checked.url.pathname + checked.url.search,
        method: 'POST',
        headers,
        body,
        signal: deadline.signal,
      });
      const answer = await readAtMost(response.body, KEPT_ANSWER_BYTES);
      const status = response.statusCode;
      const result: AttemptResult = {
        at,
        ms: elapsedMs(),
        status,
        body: answer.toString('utf8'),
        outcome: outcomeOf(status),
      };
      if (status === 429 || status === 503) {
        const retryAfterMs = parseRetryAfter(headerValue(response.headers['retry-after']), new Date());
        if (retryAfterMs !== undefined) result.retryAfterMs = retryAfterMs;
      }
      return result;
    } catch (error) {
      const reason = deadline.signal.aborted ? `timeout after ${this.timeoutMs} ms` : describeError(error);
      return { at, ms: elapsedMs(), error: reason, body: '', outcome: 'failed' };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes every pooled connection once the attempts under way are done. */
  async close(): Promise<void> {
    await this.agent.close();
  }
}
