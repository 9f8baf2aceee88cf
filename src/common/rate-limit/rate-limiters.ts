import { HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type Redis from 'ioredis';
import {
  RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import { closeRedis, counterRedis, redisConnected } from '../redis/redis-client';

export interface LimiterOptions {
  /** Put before each key with a colon: `rl:login` counts `1.2.3.4:a@b.c` as `rl:login:1.2.3.4:a@b.c` (its Redis key). */
  keyPrefix: string;
  /** Hits a key may take in a window; `consume` refuses the next one (and still counts it). */
  points: number;
  /** The window in seconds, fixed: it opens at the key's first hit. */
  duration: number;
}

/** One counter of rate-limiter-flexible as the configuration chose it. */
export interface Limiter {
  /**
   * Counts in Redis when REDIS_URL is set, shared by every replica and agent, and in
   * `inProcess` (its insurance limiter) while Redis cannot be reached; without REDIS_URL it is
   * `inProcess` itself.
   */
  limiter: RateLimiterAbstract;
  /** This process's own counts, with the same points and window. */
  inProcess: RateLimiterMemory;
}

/**
 * Makes the rate limits' counters, the API's (RateLimitGuard, a domain's verification) and the
 * relay agent's (failed SMTP AUTH attempts): rate-limiter-flexible over the one Redis client of
 * the process. While Redis cannot be reached every limiter counts in the process instead (each
 * replica then limits on its own): an outage neither opens the limits nor answers 500, and the
 * client logs a warning at each failed reconnection.
 */
export class RateLimiters {
  private constructor(private readonly redis: Redis | undefined) {}

  /** In Redis when `redisUrl` is given (once its first connection attempt has settled, at most 2 s), in the process otherwise. */
  static async connect(redisUrl?: string): Promise<RateLimiters> {
    if (!redisUrl) return new RateLimiters(undefined);
    const redis = counterRedis(redisUrl, new Logger('RateLimit'));
    await redisConnected(redis);
    return new RateLimiters(redis);
  }

  create(options: LimiterOptions): Limiter {
    const inProcess = new RateLimiterMemory(options);
    if (!this.redis) return { limiter: inProcess, inProcess };
    const limiter = new RateLimiterRedis({
      ...options,
      storeClient: this.redis,
      insuranceLimiter: inProcess,
    });
    return { limiter, inProcess };
  }

  async close(): Promise<void> {
    if (this.redis) await closeRedis(this.redis);
  }
}

/**
 * Counts a hit of `key`; past the limit sets `retry-after` (whole seconds until the window
 * ends, at least 1) and throws 429 with `message` (the error filter writes the envelope).
 */
export async function consumeOrRefuse(
  limiter: RateLimiterAbstract,
  key: string,
  reply: FastifyReply,
  message: string,
): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (e: unknown) {
    if (!(e instanceof RateLimiterRes)) throw e;
    void reply.header('retry-after', String(Math.max(1, Math.ceil(e.msBeforeNext / 1000))));
    throw new HttpException(message, HttpStatus.TOO_MANY_REQUESTS);
  }
}
