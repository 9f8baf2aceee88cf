import { createHash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'rk_';
/** `rk_` and 43 base64url characters (32 random bytes). */
const API_KEY_SHAPE = /^rk_[A-Za-z0-9_-]{43}$/;
/** How much of a key is kept to show again: `rk_` and 9 characters. */
export const API_KEY_HINT_LENGTH = 12;

/** A new key: the secret (shown once), its digest (stored, looked up) and its hint. */
export function newApiKey(): { key: string; digest: string; hint: string } {
  const key = API_KEY_PREFIX + randomBytes(32).toString('base64url');
  return { key, digest: apiKeyDigest(key), hint: key.slice(0, API_KEY_HINT_LENGTH) };
}

/** The hex SHA-256 of a key: what is stored and looked up, never the key. */
export function apiKeyDigest(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** A bearer value meant as a customer API key (it may still be unknown or malformed). */
export const isApiKeyBearer = (token: string): boolean => token.startsWith(API_KEY_PREFIX);

/** Whether it has the shape of a key this service makes (others are unknown without a lookup). */
export const hasApiKeyShape = (token: string): boolean => API_KEY_SHAPE.test(token);

/** The bearer value of a request when it is meant as a customer API key (`rk_…`), else undefined. */
export function apiKeyOf(request: {
  headers: Record<string, string | string[] | undefined>;
}): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer +(\S+) *$/i.exec(header);
  return match && isApiKeyBearer(match[1]) ? match[1] : undefined;
}
