import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** One-shot `crypto.hash`: about half the cost of createHash().update().digest() for short input. */
export const sha256Hex = (value: string): string => hash('sha256', value, 'hex');

const digest = (value: string): Buffer => hash('sha256', value, 'buffer');

/**
 * A configured secret kept as its SHA-256 digest, so each check hashes only what was presented.
 * Comparing fixed-length digests in constant time says nothing about the secret's length or content.
 */
export class ExpectedSecret {
  private readonly digest: Buffer;

  constructor(secret: string) {
    this.digest = digest(secret);
  }

  matches(given: string): boolean {
    return this.matchesDigest(digest(given));
  }

  matchesDigest(presented: Buffer): boolean {
    return timingSafeEqual(presented, this.digest);
  }
}

/** True when `given` equals any of `candidates`; every candidate is compared, so timing does not say which. */
export function matchesAnySecret(given: string, candidates: readonly ExpectedSecret[]): boolean {
  const presented = digest(given);
  let found = false;
  for (const candidate of candidates) found = candidate.matchesDigest(presented) || found;
  return found;
}

export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');
