import { IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';

/** The IPC message a parent sends to read the event loop's delay, and the type of the answer. */
export const EVENT_LOOP_DELAY_MESSAGE = 'event-loop-delay';

/** Resolution of the delay monitor: its figures overstate a delay by up to this much. */
export const EVENT_LOOP_RESOLUTION_MS = 10;

/** The event loop's delay since the previous request (the first request starts the monitor). */
export interface EventLoopDelayReport {
  type: typeof EVENT_LOOP_DELAY_MESSAGE;
  maxMs: number;
  p99Ms: number;
  meanMs: number;
  /** Timer turns measured: 0 on the first answer, which only starts the monitor. */
  samples: number;
  /** `process.memoryUsage()` when the answer was made, in MB: what the resident memory is made of. */
  memoryMb: { rss: number; heapUsed: number; heapTotal: number; external: number; arrayBuffers: number };
}

/**
 * `perf_hooks.monitorEventLoopDelay` for whoever started this process with an IPC channel
 * (`npm run bench` spawns the service with one): each `{ type: 'event-loop-delay' }` message
 * is answered with the delay since the previous one. Nothing is exposed otherwise: no route, no
 * port, no setting; a process started without a channel (a shell, the image) does not even run
 * the monitor. Answers the function that stops listening.
 */
export function reportEventLoopDelayOverIpc(): () => void {
  const send = process.send?.bind(process);
  if (!send) return () => undefined;
  let histogram: IntervalHistogram | undefined;
  const onMessage = (message: unknown) => {
    if ((message as { type?: unknown } | null)?.type !== EVENT_LOOP_DELAY_MESSAGE) return;
    const memoryMb = memoryInMb();
    const report: EventLoopDelayReport = histogram
      ? {
          type: EVENT_LOOP_DELAY_MESSAGE,
          maxMs: histogram.max / 1e6,
          p99Ms: histogram.percentile(99) / 1e6,
          meanMs: histogram.mean / 1e6,
          samples: histogram.count,
          memoryMb,
        }
      : { type: EVENT_LOOP_DELAY_MESSAGE, maxMs: 0, p99Ms: 0, meanMs: 0, samples: 0, memoryMb };
    if (!histogram) {
      histogram = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
      histogram.enable();
    }
    // Forgets the interval in progress too (the next turn only starts one): a hold that begins
    // within one resolution after a read goes unseen. The bench reads between its phases.
    histogram.reset();
    send(report);
  };
  process.on('message', onMessage);
  // The channel alone never keeps the process running: shutdown stays what SIGTERM decides.
  process.channel?.unref();
  return () => {
    process.off('message', onMessage);
    histogram?.disable();
  };
}

function memoryInMb(): EventLoopDelayReport['memoryMb'] {
  const m = process.memoryUsage();
  const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
  return {
    rss: mb(m.rss),
    heapUsed: mb(m.heapUsed),
    heapTotal: mb(m.heapTotal),
    external: mb(m.external),
    arrayBuffers: mb(m.arrayBuffers),
  };
}
