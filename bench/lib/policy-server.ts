import { connect, Socket } from 'node:net';
import type { RelayData } from './relay-data';
import { cpuMicros } from './service';

export interface PolicyRun {
  decisionsPerSecond: number;
  decisions: number;
  connections: number;
  durationS: number;
  /** Answers other than OK/REJECT/DEFER/DUNNO, or connections closed by the server. */
  failures: number;
  /** The agent's CPU time (user + system) per decision: what it costs apart from the load of the machine. */
  agentCpuMicrosPerDecision: number | null;
}

/** One request as Postfix sends it at the RCPT stage, one recipient. */
function policyRequest(data: RelayData, i: number): string {
  const relayUsername = data.relayUsernames[(i * 7919) % data.relayUsernames.length];
  const recipient =
    i % 3 === 0 ? (data.suppressedOf.get(relayUsername) ?? `own${i}@example.net`) : `clean${i}@example.org`;
  return (
    'request=smtpd_access_policy\nprotocol_state=RCPT\nprotocol_name=ESMTP\n' +
    `client_address=203.0.113.${i % 250}\nclient_name=mail${i}.example\nhelo_name=mail${i}.example\n` +
    `sasl_method=PLAIN\nsasl_username=${relayUsername}\nsender=news@company${i}.example\n` +
    `recipient=${recipient}\nsize=20480\ninstance=${i}.1\n\n`
  );
}

/**
 * quality.md "relay agent, policy": the running agent's POLICY_PORT (process `pid`), `connections`
 * clients each sending one request after the other (as smtpd processes do), a warm-up of
 * `warmupS`, then `seconds` measured; decisions per second over all of them.
 */
export async function measurePolicy(
  agent: { pid: number; port: number },
  data: RelayData,
  options: { connections: number; seconds: number; warmupS: number },
): Promise<PolicyRun> {
  await run(agent.port, data, options.connections, options.warmupS);
  const cpuBefore = cpuMicros(agent.pid);
  const measured = await run(agent.port, data, options.connections, options.seconds);
  const cpuAfter = cpuMicros(agent.pid);
  return {
    ...measured,
    agentCpuMicrosPerDecision:
      cpuBefore === undefined || cpuAfter === undefined ? null : (cpuAfter - cpuBefore) / measured.decisions,
  };
}

async function run(
  port: number,
  data: RelayData,
  connections: number,
  seconds: number,
): Promise<Omit<PolicyRun, 'agentCpuMicrosPerDecision'>> {
  const until = performance.now() + seconds * 1000;
  let decisions = 0;
  let failures = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      const socket = await open(port);
      let buffer = '';
      let waiting: (() => void) | undefined;
      socket.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const reply = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!/^action=(OK|REJECT|DEFER|DUNNO)/.test(reply)) failures += 1;
          decisions += 1;
          waiting?.();
        }
      });
      socket.on('close', () => waiting?.());
      while (performance.now() < until && !socket.destroyed) {
        const answered = new Promise<void>((resolve) => (waiting = resolve));
        socket.write(policyRequest(data, next++));
        await answered;
      }
      if (socket.destroyed) failures += 1;
      socket.end();
    }),
  );
  const durationS = (performance.now() - started) / 1000;
  return { decisionsPerSecond: decisions / durationS, decisions, connections, durationS, failures };
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.setEncoding('utf8');
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}
