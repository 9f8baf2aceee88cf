import { createHmac, createSecretKey } from 'node:crypto';
import { AppConfig } from '../../config/app-config';
import {
  isSubmissionToken,
  makeSubmissionToken,
  SUBMISSION_TOKEN_SKEW_MS,
  SUBMISSION_TOKEN_TTL_MS,
  verifySubmissionToken,
} from './submission-token';
import { SubmissionTokens } from './submission-tokens';

const SECRET = 'relay-submit-secret-0123456789abcdefghij';
const KEY = createSecretKey(Buffer.from(SECRET, 'utf8'));
const OTHER_KEY = createSecretKey(Buffer.from('another-submit-secret-0123456789abcdefgh', 'utf8'));
const NOW = Date.UTC(2030, 0, 2, 3, 4, 5, 678);
const USER = 'r-abc12345';

/** A token with the given expiry, MACed with the real key as the maker would (a forged expiry needs the key). */
function withExpiry(expiry: number, key = KEY, username = USER): string {
  const mac = createHmac('sha256', key).update(`rst1\n${username}\n${expiry}`).digest('base64url');
  return `rst1.${expiry}.${mac}`;
}

describe('relay submission tokens', () => {
  it('are rst1.<expiry in unix seconds>.<base64url HMAC-SHA256 of "rst1\\n" + username + "\\n" + expiry>', () => {
    const token = makeSubmissionToken(KEY, USER, NOW);
    const expiry = Math.floor((NOW + SUBMISSION_TOKEN_TTL_MS) / 1000);
    const mac = createHmac('sha256', SECRET).update(`rst1\n${USER}\n${expiry}`).digest('base64url');
    expect(token).toBe(`rst1.${expiry}.${mac}`);
    expect(SUBMISSION_TOKEN_TTL_MS).toBe(10 * 60_000);
  });

  it('is valid for its username, in any case, until it expires', () => {
    const token = makeSubmissionToken(KEY, USER, NOW);
    expect(verifySubmissionToken(KEY, USER, token, NOW)).toBe(true);
    expect(verifySubmissionToken(KEY, USER.toUpperCase(), token, NOW)).toBe(true);
    expect(makeSubmissionToken(KEY, 'R-ABC12345', NOW)).toBe(token);
    const expiresAt = Math.floor((NOW + SUBMISSION_TOKEN_TTL_MS) / 1000) * 1000;
    expect(verifySubmissionToken(KEY, USER, token, expiresAt - 1)).toBe(true);
  });

  it('is refused once expired', () => {
    const token = makeSubmissionToken(KEY, USER, NOW);
    const expiresAt = Math.floor((NOW + SUBMISSION_TOKEN_TTL_MS) / 1000) * 1000;
    expect(verifySubmissionToken(KEY, USER, token, expiresAt)).toBe(false);
    expect(verifySubmissionToken(KEY, USER, token, NOW + 60 * 60_000)).toBe(false);
    expect(
      verifySubmissionToken(KEY, USER, makeSubmissionToken(KEY, USER, NOW - SUBMISSION_TOKEN_TTL_MS), NOW),
    ).toBe(false);
  });

  it('is refused for another username', () => {
    const token = makeSubmissionToken(KEY, USER, NOW);
    expect(verifySubmissionToken(KEY, 'r-abc12346', token, NOW)).toBe(false);
    expect(verifySubmissionToken(KEY, `${USER}x`, token, NOW)).toBe(false);
    expect(verifySubmissionToken(KEY, '', token, NOW)).toBe(false);
  });

  it('is refused when made with another key', () => {
    expect(verifySubmissionToken(KEY, USER, makeSubmissionToken(OTHER_KEY, USER, NOW), NOW)).toBe(false);
    expect(verifySubmissionToken(OTHER_KEY, USER, makeSubmissionToken(KEY, USER, NOW), NOW)).toBe(false);
  });

  it('is refused when tampered with', () => {
    const token = makeSubmissionToken(KEY, USER, NOW);
    const [, expiry, mac] = token.split('.');
    // A later expiry under the same MAC.
    expect(verifySubmissionToken(KEY, USER, `rst1.${Number(expiry) + 1}.${mac}`, NOW)).toBe(false);
    // Each position of the MAC changed.
    for (let i = 0; i < mac.length; i++) {
      const changed = mac.slice(0, i) + (mac[i] === 'A' ? 'B' : 'A') + mac.slice(i + 1);
      expect(verifySubmissionToken(KEY, USER, `rst1.${expiry}.${changed}`, NOW)).toBe(false);
    }
    // Another spelling of the same MAC bytes (the spare bits of the last base64url character).
    const bytes = Buffer.from(mac, 'base64url');
    const respelled = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_']
      .map((c) => mac.slice(0, 42) + c)
      .find((m) => m !== mac && Buffer.from(m, 'base64url').equals(bytes));
    expect(respelled).toBeDefined();
    expect(verifySubmissionToken(KEY, USER, `rst1.${expiry}.${respelled}`, NOW)).toBe(false);
    // Another version.
    expect(verifySubmissionToken(KEY, USER, token.replace(/^rst1/, 'rst2'), NOW)).toBe(false);
  });

  it.each([
    ['empty', ''],
    ['the prefix alone', 'rst1.'],
    ['no MAC', 'rst1.1893553445'],
    ['an empty MAC', 'rst1.1893553445.'],
    ['a short MAC', `rst1.1893553445.${'A'.repeat(42)}`],
    ['a long MAC', `rst1.1893553445.${'A'.repeat(44)}`],
    ['a padded MAC', `rst1.1893553445.${'A'.repeat(43)}=`],
    ['base64 (not base64url) characters', `rst1.1893553445.${'+'.repeat(43)}`],
    ['a negative expiry', `rst1.-1893553445.${'A'.repeat(43)}`],
    ['a fractional expiry', `rst1.1893553445.5.${'A'.repeat(43)}`],
    ['a non-numeric expiry', `rst1.abc.${'A'.repeat(43)}`],
    ['trailing whitespace', `${makeSubmissionToken(KEY, USER, NOW)} `],
    ['a trailing newline', `${makeSubmissionToken(KEY, USER, NOW)}\n`],
    ['a NUL inside', makeSubmissionToken(KEY, USER, NOW).replace('.', '\0.')],
  ])('is refused when malformed: %s', (_, token) => {
    expect(verifySubmissionToken(KEY, USER, token, NOW)).toBe(false);
  });

  it('is refused with an expiry written with a leading zero, even under its MAC', () => {
    const expiry = Math.floor((NOW + SUBMISSION_TOKEN_TTL_MS) / 1000);
    const mac = createHmac('sha256', KEY).update(`rst1\n${USER}\n0${expiry}`).digest('base64url');
    expect(verifySubmissionToken(KEY, USER, `rst1.0${expiry}.${mac}`, NOW)).toBe(false);
    expect(verifySubmissionToken(KEY, USER, withExpiry(expiry), NOW)).toBe(true);
  });

  it('is refused with an expiry further ahead than a token made now could carry, even under the right key', () => {
    const bound = NOW + SUBMISSION_TOKEN_TTL_MS + SUBMISSION_TOKEN_SKEW_MS;
    // Within the clock skew allowed between the service and the relay agent: taken.
    expect(verifySubmissionToken(KEY, USER, withExpiry(Math.floor(bound / 1000)), NOW)).toBe(true);
    // Beyond it, and far beyond it: refused.
    expect(verifySubmissionToken(KEY, USER, withExpiry(Math.floor(bound / 1000) + 1), NOW)).toBe(false);
    expect(verifySubmissionToken(KEY, USER, withExpiry(Math.floor(NOW / 1000) + 365 * 86_400), NOW)).toBe(
      false,
    );
    expect(verifySubmissionToken(KEY, USER, withExpiry(999_999_999_999), NOW)).toBe(false);
  });

  it('are recognised by their prefix, a relay password never is', () => {
    expect(isSubmissionToken(makeSubmissionToken(KEY, USER, NOW))).toBe(true);
    expect(isSubmissionToken('rst1.anything')).toBe(true);
    expect(isSubmissionToken('rst1')).toBe(false);
    expect(isSubmissionToken('RST1.x')).toBe(false);
    // Relay passwords are 24 bytes of base64url: no dot, so never this prefix.
    expect(isSubmissionToken('rst1xAbCdEfGhIjKlMnOpQrStUvWxYz012')).toBe(false);
  });
});

describe('SubmissionTokens', () => {
  const tokens = (env: NodeJS.ProcessEnv) =>
    new SubmissionTokens(AppConfig.fromEnv(env, { warn: () => undefined }));

  it('makes and verifies tokens with RELAY_SUBMIT_SECRET', () => {
    const withSecret = tokens({ RELAY_SUBMIT_SECRET: SECRET });
    const token = withSecret.make(USER);
    expect(verifySubmissionToken(KEY, USER, token)).toBe(true);
    expect(withSecret.verify(USER.toUpperCase(), token)).toBe(true);
    expect(withSecret.verify('r-other000', token)).toBe(false);
    expect(withSecret.verify(USER, makeSubmissionToken(OTHER_KEY, USER))).toBe(false);
  });

  it('without RELAY_SUBMIT_SECRET makes none (a clear error) and verifies none', () => {
    const without = tokens({});
    expect(() => without.make(USER)).toThrow('RELAY_SUBMIT_SECRET is not set');
    expect(without.verify(USER, makeSubmissionToken(KEY, USER))).toBe(false);
    expect(tokens({ RELAY_SUBMIT_SECRET: '' }).verify(USER, makeSubmissionToken(KEY, USER))).toBe(false);
  });
});
