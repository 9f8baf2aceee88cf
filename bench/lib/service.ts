import { ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { EVENT_LOOP_DELAY_MESSAGE, EventLoopDelayReport } from '../../src/common/runtime/event-loop-report';

/** The built service (`npm run build`), run the production way: `node dist/main.js`. */
export const MAIN_JS = join(__dirname, '..', '..', 'dist', 'main.js');

export interface RunningService {
  pid: number;
  baseUrl: string;
  /** Spawn → first 200 from GET /health (the readiness route: the database answers). */
  readyMs: number;
  /** The last lines the service wrote (stdout and stderr), for error messages. */
  output(): string;
  /**
   * The service's event-loop delay since the previous call (`monitorEventLoopDelay`, read over
   * the IPC channel the bench opens; the first call starts the monitor and answers zeros).
   */
  eventLoopDelay(): Promise<EventLoopDelayReport>;
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

/**
 * Spawns the service as a user runs it, `node dist/main.js` with exactly `env` (plus PATH/HOME)
 * and nothing else, and waits until GET /health answers 200. The one addition is an IPC channel,
 * which only the event-loop report listens on (src/common/runtime/event-loop-report.ts).
 */
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
      ...env,
      PORT: String(port),
    },
    // Both pipes are drained: pino writes synchronously, so a full pipe would stall the service.
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
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
  return {
    pid: child.pid!,
    baseUrl,
    readyMs,
    output,
    eventLoopDelay: () => askEventLoopDelay(child),
    stop: () => stopChild(child),
  };
}

function askEventLoopDelay(child: ChildProcess): Promise<EventLoopDelayReport> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off('message', onMessage);
      reject(new Error('The service did not report its event-loop delay within 10 s'));
    }, 10_000);
    const onMessage = (message: unknown) => {
      if ((message as { type?: unknown } | null)?.type !== EVENT_LOOP_DELAY_MESSAGE) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(message as EventLoopDelayReport);
    };
    child.on('message', onMessage);
    child.send({ type: EVENT_LOOP_DELAY_MESSAGE });
  });
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

/**
 * CPU time (user + system, µs) of every process of this machine whose command is `command`
 * (`postgres`: the database's server and its backends, when it runs here). A process that ends
 * between two readings takes its time with it: the pooled backends of a run do not.
 */
export function commandCpuMicros(command: string): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== command) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) * 10_000;
    } catch {
      // Ended meanwhile.
    }
  }
  return total;
}

/** The whole machine's CPU time, busy and in all (µs summed over its CPUs), from /proc/stat. */
export function machineCpuMicros(): { busy: number; total: number } | undefined {
  try {
    const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
      .split('\n', 1)[0]
      .split(/\s+/)
      .slice(1, 9)
      .map(Number);
    const busy = user + nice + system + irq + softirq + steal;
    return { busy: busy * 10_000, total: (busy + idle + iowait) * 10_000 };
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

/** A JSON call to the service as `token`, answering the envelope's `data`; any other status than `expected` throws. */
export async function call<T>(
  service: RunningService,
  method: string,
  path: string,
  token: string,
  expected: number,
  body?: unknown,
): Promise<T> {
  const res = await fetch(`${service.baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== expected)
    throw new Error(`${method} ${path}: expected ${expected}, got ${res.status}: ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { data: T }).data;
}
