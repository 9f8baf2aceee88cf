import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { closeRedis, counterRedis, redisConnected } from '../redis/redis-client';

export const RATE_LIMIT_STORE = Symbol('RATE_LIMIT_STORE');

export interface RateLimitHit {
  /** Hits in the current window, this one included. */
  count: number;
  /** Milliseconds until the window resets. */
  resetInMs: number;
}

/** A fixed-window counter per key. */
export interface RateLimitStore {
  hit(key: string, windowMs: number): RateLimitHit | Promise<RateLimitHit>;
  close(): Promise<void>;
}

/** One process's counters; expired windows are swept once a minute. */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly sweeper = setInterval(() => this.sweep(), 60_000).unref();

  hit(key: string, windowMs: number): RateLimitHit {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return { count: window.count, resetInMs: window.resetAt - now };
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }

  close(): Promise<void> {
    clearInterval(this.sweeper);
    return Promise.resolve();
  }
}

const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}`;

/**
 * Counters shared by every replica (REDIS_URL). While Redis cannot be reached the hits are
 * counted in the process instead (each replica then limits on its own) and a warning logged:
 * the limiter must not take the API down with it, nor stop limiting.
 */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly logger = new Logger('RateLimit');
  private readonly redis: Redis;
  private readonly fallback = new MemoryRateLimitStore();

  constructor(url: string) {
    this.redis = counterRedis(url, this.logger);
  }

  async hit(key: string, windowMs: number): Promise<RateLimitHit> {
    try {
      const [count, ttl] = (await this.redis.eval(HIT_SCRIPT, 1, `rl:${key}`, windowMs)) as [number, number];
      return { count, resetInMs: ttl };
    } catch (e) {
      this.logger.warn(`Rate limit counted in the process: ${(e as Error).message}`);
      return this.fallback.hit(key, windowMs);
    }
  }

  connected(timeoutMs = 2000): Promise<void> {
    return redisConnected(this.redis, timeoutMs);
  }

  async close(): Promise<void> {
    await this.fallback.close();
    await closeRedis(this.redis);
  }
}
