import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { consumeOrRefuse, RateLimiters } from '../../common/rate-limit/rate-limiters';

/** quality.md: a domain is verified at most once per 10 s (DNS is slow, and others' resolvers too). */
export const VERIFY_WINDOW_MS = 10_000;

/**
 * Counts verifications per domain with the other rate limits (`rl:domain-verify:<id>`), after the
 * caller is known to own the domain (so nobody else can use up its window), for the user and
 * admin routes alike.
 */
@Injectable()
export class VerifyRateLimit {
  private readonly limiter: RateLimiterAbstract;

  constructor(limiters: RateLimiters) {
    this.limiter = limiters.create({
      keyPrefix: 'rl:domain-verify',
      points: 1,
      duration: VERIFY_WINDOW_MS / 1000,
    }).limiter;
  }

  /** Throws 429 with `retry-after` when the domain was verified less than 10 s ago. */
  take(domainId: number, reply: FastifyReply): Promise<void> {
    return consumeOrRefuse(
      this.limiter,
      String(domainId),
      reply,
      'This domain was checked less than 10 seconds ago, try again later',
    );
  }
}
