import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import {
  EVENT_LOOP_DELAY_MESSAGE,
  EVENT_LOOP_RESOLUTION_MS,
  EventLoopDelayReport,
} from './event-loop-report';

const MODULE = join(__dirname, 'event-loop-report.ts');
const BLOCK_MS = 150;

/** A process that reports over IPC and, on { block: ms }, holds its event loop that long. */
function reporter(stdio: 'ipc' | 'none'): ChildProcess {
  const code = `
    const { reportEventLoopDelayOverIpc, EVENT_LOOP_RESOLUTION_MS: RESOLUTION } = require(${JSON.stringify(MODULE)});
    reportEventLoopDelayOverIpc();
    process.on('message', (m) => {
      // The hold starts after the monitor's first turn since the read (a read resets it, and the
      // turn after a reset only starts the next interval); the answer goes out from a timer due
      // after the monitor's next turn (both count from the loop's time before the hold).
      if (m.block) setTimeout(() => {
        const until = Date.now() + m.block;
        while (Date.now() < until);
        setTimeout(() => process.send({ blocked: m.block }), 2 * RESOLUTION);
      }, 2 * RESOLUTION);
      if (m.exit) process.exit(0);
    });
    if (!process.send) { console.log(process.listenerCount('message') === 1 ? 'no report' : 'report'); }
    setInterval(() => undefined, 1000);`;
  return spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', code], {
    stdio: stdio === 'ipc' ? ['ignore', 'inherit', 'inherit', 'ipc'] : ['ignore', 'pipe', 'inherit'],
  });
}

function answer<T>(child: ChildProcess, accept: (message: unknown) => boolean): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      if (!accept(message)) return;
      child.off('message', onMessage);
      resolve(message as T);
    };
    child.on('message', onMessage);
  });
}

const isReport = (m: unknown) => (m as { type?: unknown }).type === EVENT_LOOP_DELAY_MESSAGE;

describe('the event-loop delay over IPC', () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    child?.kill();
  });

  it('answers zeros at first, then the delay since the previous request, a held loop included', async () => {
    child = reporter('ipc');
    const ask = async () => {
      const pending = answer<EventLoopDelayReport>(child!, isReport);
      child!.send({ type: EVENT_LOOP_DELAY_MESSAGE });
      return pending;
    };
    const first = await ask();
    expect(first).toEqual({
      type: EVENT_LOOP_DELAY_MESSAGE,
      maxMs: 0,
      p99Ms: 0,
      meanMs: 0,
      samples: 0,
      memoryMb: {
        rss: expect.any(Number),
        heapUsed: expect.any(Number),
        heapTotal: expect.any(Number),
        external: expect.any(Number),
        arrayBuffers: expect.any(Number),
      },
    });
    // The child's own memory: a heap within its resident memory.
    expect(first.memoryMb.heapUsed).toBeGreaterThan(0);
    expect(first.memoryMb.heapTotal).toBeLessThan(first.memoryMb.rss);
    // The monitor measures from its first timer turn on: wait for a turn before holding the loop.
    // Each ask resets the monitor, so asking back to back (an IPC round trip is far shorter than
    // the monitor's resolution) would never let a turn complete: give it two resolutions.
    while ((await ask()).samples === 0) {
      await new Promise((resolve) => setTimeout(resolve, 2 * EVENT_LOOP_RESOLUTION_MS));
    }

    const blocked = answer(child, (m) => (m as { blocked?: number }).blocked === BLOCK_MS);
    child.send({ block: BLOCK_MS });
    await blocked;
    const held = await ask();
    expect(held.samples).toBeGreaterThan(0);
    expect(held.maxMs).toBeGreaterThanOrEqual(BLOCK_MS);

    // Read and reset: the next answer covers only what came after.
    const after = await ask();
    expect(after.maxMs).toBeLessThan(BLOCK_MS);
  });

  it('listens for nothing in a process started without a channel', async () => {
    child = reporter('none');
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    await new Promise<void>((resolve) => child!.stdout!.once('end', resolve).once('data', () => resolve()));
    expect(out.trim()).toBe('no report');
  });
});
