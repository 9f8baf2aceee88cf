/**
 * Where the service's event loop stalls, for profiling a bench run: preload it into the service,
 * BENCH_NODE_ARGS="-r ./bench/stall-watch.cjs" npm run bench. The main thread beats every 5 ms
 * into shared memory; a worker thread that sees no beat for 100 ms pauses the main thread through
 * the inspector (Debugger.pause takes effect at the next JavaScript it runs), writes its stack,
 * resumes it, and does so again every 40 ms while the stall lasts. Appends to STALL_LOG
 * (/tmp/stalls.log): each stack, how long the stall lasted, GC pauses over 40 ms, and the bench's
 * phase marks (the event-loop report's IPC asks), so a stall can be placed in its phase.
 * A CPU profile cannot show this: under load the loop never idles, so busy is not blocked.
 */
const { Worker, isMainThread } = require('worker_threads');
const LOG = process.env.STALL_LOG || '/tmp/stalls.log';
if (isMainThread) {
  const sab = new SharedArrayBuffer(8);
  const beat = new Float64Array(sab);
  const tick = () => {
    beat[0] = performance.timeOrigin + performance.now();
  };
  tick();
  setInterval(tick, 5).unref();
  const w = new Worker(__filename, { workerData: sab });
  w.unref();
  const { PerformanceObserver } = require('perf_hooks');
  new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      if (e.duration > 40)
        require('fs').appendFileSync(
          LOG,
          `${new Date().toISOString()} GC kind ${e.detail?.kind} ${e.duration.toFixed(0)} ms\n`,
        );
  }).observe({ entryTypes: ['gc'] });
  process.on('message', (m) => {
    if (m && m.type)
      require('fs').appendFileSync(
        LOG,
        `${new Date().toISOString()} IPC ${JSON.stringify(m).slice(0, 200)}\n`,
      );
  });
} else {
  const { workerData } = require('worker_threads');
  const beat = new Float64Array(workerData);
  const { Session } = require('inspector');
  const fs = require('fs');
  const s = new Session();
  s.connectToMainThread();
  const scripts = new Map();
  s.on('Debugger.scriptParsed', (m) => scripts.set(m.params.scriptId, m.params.url));
  s.post('Debugger.enable');
  let pausedFor = 0;
  s.on('Debugger.paused', (m) => {
    const frames = m.params.callFrames
      .slice(0, 25)
      .map(
        (f) =>
          `${f.functionName || '(anon)'} ${(scripts.get(f.location.scriptId) || '').split('/').slice(-2).join('/')}:${f.location.lineNumber + 1}`,
      );
    fs.appendFileSync(
      LOG,
      `${new Date().toISOString()} stalled ${pausedFor.toFixed(0)} ms\n  ${frames.join('\n  ')}\n`,
    );
    s.post('Debugger.resume');
  });
  let reported = 0;
  let stallStart = 0;
  let lastPause = 0;
  setInterval(() => {
    const now = performance.timeOrigin + performance.now();
    const age = now - beat[0];
    if (age > 100 && (beat[0] !== reported || now - lastPause > 40)) {
      if (beat[0] !== reported) stallStart = beat[0];
      reported = beat[0];
      lastPause = now;
      pausedFor = age;
      s.post('Debugger.pause');
    }
    if (stallStart && beat[0] !== stallStart) {
      fs.appendFileSync(
        LOG,
        `${new Date().toISOString()} stall ended after ${(beat[0] - stallStart).toFixed(0)} ms\n`,
      );
      stallStart = 0;
    }
  }, 20);
}
