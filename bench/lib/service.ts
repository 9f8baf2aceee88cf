import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';

/** The built service (`npm run build`), run the production way: `node dist/main.js`. */
export const MAIN_JS = join(__dirname, '..', '..', 'dist', 'main.js');

/**
 * The process environment the Dockerfile gives the service (keep the two the same): glibc's
 * malloc serves blocks of 1 MiB and more with mmap and unmaps them when freed. Without it each
 * libuv thread that has run argon2 keeps its 19 MiB of hashing memory for good (~77 MB RSS
 * after a few concurrent logins), because glibc raises its mmap threshold after the first free.
 */
export const RUNTIME_ENV = { MALLOC_MMAP_THRESHOLD_: '1048576' };

export interface RunningService {
  pid: number;
  baseUrl: string;
  /** Spawn → first 200 from GET /health (the readiness route: the database answers). */
  readyMs: number;
  /** The last lines the service wrote (stdout and stderr), for error messages. */
  output(): string;
  stop(): Promise<void>;
}

/** A port nobody listens on right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** Spawns the service with exactly `env` (plus PATH/HOME) and waits until GET /health answers 200. */
export async function startService(env: Record<string, string>, timeoutMs = 30_000): Promise<RunningService> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const tail: string[] = [];
  const keep = (chunk: Buffer) => {
    tail.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (tail.length > 40) tail.splice(0, tail.length - 40);
  };

  const started = performance.now();
  // e.g. BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the service under load.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, MAIN_JS], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...RUNTIME_ENV,
      ...env,
      PORT: String(port),
    },
    // Both pipes are drained: pino writes synchronously, so a full pipe would stall the service.
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited: string | undefined;
  child.once('exit', (code, signal) => {
    exited = `exited with ${signal ?? code}`;
  });
  const output = () => tail.join('\n');

  try {
    for (;;) {
      if (exited) throw new Error(`The service ${exited} before it was ready:\n${output()}`);
      if (performance.now() - started > timeoutMs)
        throw new Error(`Not ready after ${timeoutMs} ms:\n${output()}`);
      if ((await statusOf(`${baseUrl}/health`)) === 200) break;
      await sleep(10);
    }
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  const readyMs = performance.now() - started;
  return { pid: child.pid!, baseUrl, readyMs, output, stop: () => stopChild(child) };
}

async function statusOf(url: string): Promise<number | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return undefined; // not listening yet
  }
}

/** SIGTERM, then SIGKILL if it is still running `graceMs` later (the service and agent may take 10 s to drain). */
export function stopChild(child: ChildProcess, graceMs = 12_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined)
    return Promise.resolve();
  return new Promise((resolve) => {
    const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(killer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Whether something accepts TCP connections on 127.0.0.1:`port` (the connection is closed at once). */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Resident memory of a process in bytes (Linux /proc), or undefined where /proc is not available. */
export function residentBytes(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** CPU time (user + system) a process has used so far, in microseconds (Linux /proc), or undefined. */
export function cpuMicros(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return undefined;
  }
}

/** Polls VmRSS every `everyMs` while running; `peak()` is the highest value seen. */
export class RssSampler {
  private max: number | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pid: number,
    private readonly everyMs = 100,
  ) {}

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
    this.sample();
  }

  peak(): number | undefined {
    return this.max;
  }

  private sample(): void {
    const rss = residentBytes(this.pid);
    if (rss !== undefined && (this.max === undefined || rss > this.max)) this.max = rss;
  }
}
