import { HttpException, HttpStatus, Inject, Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { RATE_LIMIT_STORE, RateLimitStore } from '../../common/rate-limit/rate-limit.store';

/** quality.md: a domain is verified at most once per 10 s (DNS is slow, and others' resolvers too). */
export const VERIFY_WINDOW_MS = 10_000;

/**
 * Counts verifications per domain in the shared rate-limit store, after the caller is known to
 * own the domain (so nobody else can use up its window), for the user and admin routes alike.
 */
@Injectable()
export class VerifyRateLimit {
  constructor(@Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore) {}

  /** Throws 429 with `retry-after` when the domain was verified less than 10 s ago. */
  async take(domainId: number, reply: FastifyReply): Promise<void> {
    const hit = await this.store.hit(`domain-verify:${domainId}`, VERIFY_WINDOW_MS);
    if (hit.count <= 1) return;
    void reply.header('retry-after', String(Math.max(1, Math.ceil(hit.resetInMs / 1000))));
    throw new HttpException(
      'This domain was checked less than 10 seconds ago, try again later',
      HttpStatus.TOO_MANY_REQUESTS,
    );
  }
}
