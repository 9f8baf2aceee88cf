import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { accepts, freePort, sleep, stopChild } from './service';

/** The built relay agent (`npm run build`), run the way `npm run relay-agent` runs it. */
export const AGENT_JS = join(__dirname, '..', '..', 'dist', 'relay-agent', 'main.js');

export interface AgentPorts {
  policy: number;
  sasl: number;
  milter: number;
}

export interface RunningAgent {
  pid: number;
  ports: AgentPorts;
  /** Spawn → all three listeners accept connections. */
  readyMs: number;
  /** The last lines the agent wrote (stdout and stderr), for error messages. */
  output(): string;
  /** Whether it is still running (a crash mid-run shows as failures, this says why). */
  running(): boolean;
  stop(): Promise<void>;
}

/**
 * `node dist/relay-agent/main.js` in its own process as a user runs it, with exactly `env` (plus
 * PATH/HOME), its policy, SMTP AUTH and milter listeners on free ports of
 * 127.0.0.1, resolved once all three accept connections. BENCH_AGENT_NODE_ARGS adds flags for its
 * node, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" (the profile is written when it exits).
 */
export async function startRelayAgent(
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<RunningAgent> {
  const ports = await distinctFreePorts(3);
  const agentPorts: AgentPorts = { policy: ports[0], sasl: ports[1], milter: ports[2] };
  const tail: string[] = [];
  const keep = (chunk: Buffer) => {
    tail.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (tail.length > 40) tail.splice(0, tail.length - 40);
  };
  const nodeArgs = (process.env.BENCH_AGENT_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const started = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, AGENT_JS], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...env,
      RELAY_AGENT_HOST: '127.0.0.1',
      POLICY_PORT: String(agentPorts.policy),
      SASL_PORT: String(agentPorts.sasl),
      MILTER_PORT: String(agentPorts.milter),
      // Its /health and /metrics listener is not measured: off, so a fixed port cannot clash.
      AGENT_HTTP_PORT: '0',
    },
    // Both pipes drained: pino writes synchronously, so a full pipe would stall the agent.
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `exited with ${signal ?? code}`));
  const output = () => tail.join('\n');

  try {
    for (const port of ports) {
      for (;;) {
        if (exited) throw new Error(`The relay agent ${exited} before it listened:\n${output()}`);
        if (performance.now() - started > timeoutMs)
          throw new Error(`The relay agent did not listen on ${port} within ${timeoutMs} ms:\n${output()}`);
        if (await accepts(port)) break;
        await sleep(20);
      }
    }
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return {
    pid: child.pid!,
    ports: agentPorts,
    readyMs: performance.now() - started,
    output,
    running: () => exited === undefined,
    stop: () => stopChild(child),
  };
}

async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

export interface AgentStarts {
  /** Each run's spawn → all three listeners accept, in ms, in run order. */
  runsMs: number[];
  medianMs: number;
  worstMs: number;
}

/**
 * quality.md "relay agent start: command to listening": `node dist/relay-agent/main.js` spawned
 * `runs` times as a user runs it (nothing compiled at start), each timed from the spawn until its
 * policy, SMTP AUTH and milter ports all accept a connection, then stopped.
 */
export async function measureAgentStarts(env: Record<string, string>, runs: number): Promise<AgentStarts> {
  const runsMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const agent = await startRelayAgent(env);
    runsMs.push(agent.readyMs);
    await agent.stop();
  }
  const sorted = [...runsMs].sort((a, b) => a - b);
  return { runsMs, medianMs: sorted[Math.floor(sorted.length / 2)], worstMs: sorted[sorted.length - 1] };
}
