import { Logger } from '@nestjs/common';
import Redis from 'ioredis';

/**
 * A Redis client for shared counters (rate limits, SMTP AUTH failures): one try per command and
 * no offline queue, so an unreachable Redis fails a command at once (the caller counts in the
 * process instead) rather than holding requests; its errors are logged, never thrown.
 */
export function counterRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  redis.on('error', (e: Error) => logger.warn(`Redis: ${e.message}`));
  return redis;
}

/**
 * Settles once the first connection attempt has: ready, failed, or `timeoutMs` passed. Until
 * then every command would fail open, so callers wait for it before they serve. Never rejects:
 * an unreachable Redis only costs the counters, not the start.
 */
export function redisConnected(redis: Redis, timeoutMs = 2000): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done).off('error', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    redis.once('ready', done).once('error', done);
  });
}

export async function closeRedis(redis: Redis): Promise<void> {
  await redis.quit().catch(() => undefined);
  // quit() fails while Redis is unreachable and the client would go on reconnecting forever.
  redis.disconnect();
}
