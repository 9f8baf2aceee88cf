import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { closeRedis, counterRedis, redisConnected } from '../../common/redis/redis-client';
import { isIPv4, isIPv6 } from 'node:net';

export const AUTH_FAILURES = Symbol('AUTH_FAILURES');

/**
 * Failed SMTP AUTH attempts per client address in a fixed window that opens at the first
 * failure. Not the API's RateLimitStore: that one only counts up, this one is read before the
 * check (blocked or not) and cleared by a success.
 */
export interface AuthFailures {
  /** Failures in the address's current window (0 when none is open). */
  count(key: string): Promise<number>;
  add(key: string, windowMs: number): Promise<void>;
  clear(key: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * The key an address's failures are counted under: an IPv4 address as it is (IPv4-mapped IPv6
 * written as IPv4), an IPv6 address by its /64 (one customer network), anything else as given.
 */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped && isIPv4(mapped[1])) return mapped[1];
  if (!isIPv6(address)) return address;
  const [head, tail = ''] = address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  // An embedded IPv4 tail (`…:1.2.3.4`) lies in the low 64 bits and is dropped anyway.
  const words = address.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${words
    .slice(0, 4)
    .map((w) => parseInt(w, 16).toString(16))
    .join(':')}::/64`;
}

/** One process's counters; expired windows are swept once a minute. */
export class MemoryAuthFailures implements AuthFailures {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly sweeper = setInterval(() => this.sweep(), 60_000).unref();

  count(key: string): Promise<number> {
    const window = this.windows.get(key);
    return Promise.resolve(window && window.resetAt > Date.now() ? window.count : 0);
  }

  add(key: string, windowMs: number): Promise<void> {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return Promise.resolve();
  }

  clear(key: string): Promise<void> {
    this.windows.delete(key);
    return Promise.resolve();
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

const ADD_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count`;

/**
 * Counters shared by every agent (REDIS_URL). While Redis cannot be reached the failures are
 * counted in the process instead (each agent then blocks on its own), and a warning is logged:
 * an outage costs neither SMTP AUTH nor the blocking. An address blocked in the process during
 * an outage stays blocked when Redis is back (the larger of the two counts).
 */
export class RedisAuthFailures implements AuthFailures {
  private readonly logger = new Logger('SaslFailures');
  private readonly redis: Redis;
  private readonly fallback = new MemoryAuthFailures();

  constructor(url: string) {
    this.redis = counterRedis(url, this.logger);
  }

  async count(key: string): Promise<number> {
    const inProcess = await this.fallback.count(key);
    try {
      return Math.max(Number(await this.redis.get(redisKey(key))) || 0, inProcess);
    } catch (e) {
      this.logger.warn(`Failed SMTP AUTH attempts read from the process: ${(e as Error).message}`);
      return inProcess;
    }
  }

  async add(key: string, windowMs: number): Promise<void> {
    await this.redis.eval(ADD_SCRIPT, 1, redisKey(key), windowMs).catch(async (e: Error) => {
      this.logger.warn(`Failed SMTP AUTH attempt counted in the process: ${e.message}`);
      await this.fallback.add(key, windowMs);
    });
  }

  async clear(key: string): Promise<void> {
    await this.fallback.clear(key);
    await this.redis.del(redisKey(key)).catch((e: Error) => {
      this.logger.warn(`Failed SMTP AUTH attempts not cleared: ${e.message}`);
    });
  }

  /** Settles once the first connection attempt has (ready, failed, or `timeoutMs`); never rejects. */
  connected(timeoutMs = 2000): Promise<void> {
    return redisConnected(this.redis, timeoutMs);
  }

  async close(): Promise<void> {
    await this.fallback.close();
    await closeRedis(this.redis);
  }
}

function redisKey(key: string): string {
  return `sasl-fail:${key}`;
}
