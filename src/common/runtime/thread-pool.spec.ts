import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { defaultThreadPoolSize } from './thread-pool';

const MODULE = join(__dirname, 'thread-pool.ts');

/**
 * Threads of a fresh node process once the libuv pool has started (one pbkdf2 queued), with
 * thread-pool.ts imported first, as main.ts does, and `env` for UV_THREADPOOL_SIZE.
 */
function threadsWithPool(env: Record<string, string>): { threads: number; setting: string } {
  const code = `
    require(${JSON.stringify(MODULE)});
    require('node:crypto').pbkdf2('p', 's', 1, 32, 'sha256', () => {
      const threads = require('node:fs').readdirSync('/proc/self/task').length;
      process.stdout.write(JSON.stringify({ threads, setting: process.env.UV_THREADPOOL_SIZE }));
    });`;
  const run = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', code], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout) as { threads: number; setting: string };
}

describe('the libuv pool size', () => {
  it('is one thread per core, at least 2 and at most 4', () => {
    expect([1, 2, 3, 4, 8, 64].map((cores) => defaultThreadPoolSize(cores))).toEqual([2, 2, 3, 4, 4, 4]);
  });

  const linux = existsSync('/proc/self/task') ? it : it.skip;

  linux('is set at start, before libuv creates the pool, and the pool has that many threads', () => {
    const bySetting = threadsWithPool({});
    const four = threadsWithPool({ UV_THREADPOOL_SIZE: '4' });
    expect(bySetting.setting).toBe(String(defaultThreadPoolSize()));
    // Same process otherwise: the difference is the pool's threads alone.
    expect(four.threads - bySetting.threads).toBe(4 - defaultThreadPoolSize());
  });

  linux("keeps the operator's UV_THREADPOOL_SIZE", () => {
    const six = threadsWithPool({ UV_THREADPOOL_SIZE: '6' });
    const four = threadsWithPool({ UV_THREADPOOL_SIZE: '4' });
    expect(six.setting).toBe('6');
    expect(six.threads - four.threads).toBe(2);
  });
});
