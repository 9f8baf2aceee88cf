const SECOND_MS = 1000;
const MINUTE_MS = 60 * SECOND_MS;
const HOUR_MS = 60 * MINUTE_MS;

/** The wait after the 1st, 2nd, ... 9th failed attempt: 10 attempts over about 3 days. */
export const RETRY_DELAYS_MS: readonly number[] = [
  5 * SECOND_MS,
  5 * MINUTE_MS,
  30 * MINUTE_MS,
  2 * HOUR_MS,
  5 * HOUR_MS,
  10 * HOUR_MS,
  14 * HOUR_MS,
  20 * HOUR_MS,
  20 * HOUR_MS,
];

/** Attempts of one delivery before it is failed: the first one and one after each delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** The longest wait a receiver's Retry-After can ask for. */
export const MAX_RETRY_AFTER_MS = HOUR_MS;

/** Each delay is stretched or shrunk by up to this fraction, so failed deliveries do not retry in lockstep. */
export const RETRY_JITTER = 0.1;

/**
 * The wait before the next attempt after `attemptsMade` failed ones, or null when the delivery is
 * failed. A receiver's Retry-After (already capped at 1 hour) lengthens the wait, never shortens it.
 */
export function nextAttemptDelayMs(
  attemptsMade: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number | null {
  if (!Number.isInteger(attemptsMade) || attemptsMade < 1) {
    throw new RangeError(`attemptsMade must be a positive integer, got ${attemptsMade}`);
  }
  if (attemptsMade >= MAX_ATTEMPTS) return null;
  const delay = RETRY_DELAYS_MS[attemptsMade - 1];
  const jittered = Math.round(delay * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random()));
  if (retryAfterMs === undefined) return jittered;
  return Math.max(jittered, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

const DELAY_SECONDS = /^\d+$/;
// IMF-fixdate, the HTTP-date form senders must use (RFC 9110 section 5.6.7).
const IMF_FIXDATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/**
 * A Retry-After header as milliseconds from `now` (delay-seconds or an IMF-fixdate), capped at 1 hour;
 * undefined when absent, unreadable or in the past.
 */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (DELAY_SECONDS.test(trimmed)) return Math.min(Number(trimmed) * SECOND_MS, MAX_RETRY_AFTER_MS);
  if (!IMF_FIXDATE.test(trimmed)) return undefined;
  const waitMs = Date.parse(trimmed) - now.getTime();
  if (Number.isNaN(waitMs) || waitMs < 0) return undefined;
  return Math.min(waitMs, MAX_RETRY_AFTER_MS);
}
