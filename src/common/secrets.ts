import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** Constant-time equality of two secrets of any length (compares fixed-length digests). */
export function secretsEqual(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/** True when `given` equals any of `candidates`; every candidate is compared, so timing does not say which. */
export function matchesAnySecret(given: string, candidates: readonly string[]): boolean {
  let found = false;
  for (const candidate of candidates) found = secretsEqual(given, candidate) || found;
  return found;
}

export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');
