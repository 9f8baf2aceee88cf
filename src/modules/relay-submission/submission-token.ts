import { createHmac, KeyObject, timingSafeEqual } from 'node:crypto';

/**
 * Relay submission tokens (auth.md "Relay submission token", platform.md "Sending by HTTP"):
 * what the service hands the relay's SMTP AUTH, as the company's relay username, in place of the
 * relay password when it submits a message sent by HTTP. The relay agent accepts one for that
 * username only, for 10 minutes. Both sides hold the key (RELAY_SUBMIT_SECRET); nothing is stored.
 *
 *   rst1.<expiry, unix seconds>.<base64url HMAC-SHA256(key, "rst1\n" + username in lower case + "\n" + expiry)>
 */
export const SUBMISSION_TOKEN_TTL_MS = 10 * 60_000;

/**
 * How far the verifier's clock may lag the maker's: an expiry up to this much beyond the TTL
 * from the verifier's now is still taken (the service and the relay agent may run on two hosts).
 */
export const SUBMISSION_TOKEN_SKEW_MS = 60_000;

const PREFIX = 'rst1.';

/** The version, a canonical decimal expiry (no sign, no leading zero) and a 32-byte MAC in unpadded base64url. */
const FORMAT = /^rst1\.([1-9][0-9]{0,11})\.([A-Za-z0-9_-]{43})$/;

/** A token for `relayUsername` that expires TTL after `now`. */
export function makeSubmissionToken(key: KeyObject, relayUsername: string, now = Date.now()): string {
  const expiry = String(Math.floor((now + SUBMISSION_TOKEN_TTL_MS) / 1000));
  return `${PREFIX}${expiry}.${mac(key, relayUsername, expiry)}`;
}

/**
 * Whether `token` is one made with `key` for `relayUsername` (any case) that has not expired at
 * `now`. An expiry further ahead than a token made now could carry is refused as well.
 */
export function verifySubmissionToken(
  key: KeyObject,
  relayUsername: string,
  token: string,
  now = Date.now(),
): boolean {
  const parts = FORMAT.exec(token);
  if (!parts) return false;
  const [, expiry, given] = parts;
  const expiresAt = Number(expiry) * 1000;
  if (expiresAt <= now || expiresAt > now + SUBMISSION_TOKEN_TTL_MS + SUBMISSION_TOKEN_SKEW_MS) return false;
  // The MAC as text, not decoded: base64url's last character has spare bits, so two spellings
  // decode to the same bytes; only the one the maker wrote is taken.
  return timingSafeEqual(
    Buffer.from(given, 'latin1'),
    Buffer.from(mac(key, relayUsername, expiry), 'latin1'),
  );
}

/** Whether a presented SMTP AUTH password is shaped as a submission token (not whether it is valid). */
export function isSubmissionToken(password: string): boolean {
  return password.startsWith(PREFIX);
}

function mac(key: KeyObject, relayUsername: string, expiry: string): string {
  return createHmac('sha256', key)
    .update(`rst1\n${relayUsername.toLowerCase()}\n${expiry}`, 'utf8')
    .digest('base64url');
}
