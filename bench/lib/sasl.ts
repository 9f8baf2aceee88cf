import { relayPasswordDigest } from '../../src/modules/companies/relay-credentials';
import { SaslTestClient } from '../../test/support/relay-agent/sasl-test-client';
import type { BenchDatabase } from './database';
import { cpuMicros } from './service';

const BATCH = 500;

export interface SaslRun {
  authPerSecond: number;
  authentications: number;
  p99Ms: number;
  connections: number;
  durationS: number;
  /** Answers other than OK, or connections closed by the agent. */
  failures: number;
  /** The agent's CPU time per authentication: what it costs apart from the load of the machine. */
  agentCpuMicrosPerAuth: number | null;
}

/** `count` relay passwords written as the API stores them (SHA-256 digests) on the bench's companies. */
export async function seedRelayPasswords(
  db: BenchDatabase,
  relayUsernames: string[],
): Promise<Array<{ username: string; password: string }>> {
  const accounts = relayUsernames.map((username, i) => ({ username, password: `bench-relay-password-${i}` }));
  const statements = [];
  for (let start = 0; start < accounts.length; start += BATCH) {
    const batch = accounts.slice(start, start + BATCH);
    statements.push({
      sql:
        'UPDATE companies SET relay_password_hash = CASE relay_username ' +
        batch.map(() => 'WHEN ? THEN ?').join(' ') +
        ` END WHERE relay_username IN (${batch.map(() => '?').join(', ')})`,
      params: [
        ...batch.flatMap((a) => [a.username, relayPasswordDigest(a.password)]),
        ...batch.map((a) => a.username),
      ],
    });
  }
  await db.execute(statements);
  return accounts;
}

/**
 * quality.md "relay agent, SMTP AUTH": the running agent's SASL_PORT (process `pid`), `connections`
 * clients each sending AUTH PLAIN with a right password one after the other (as Postfix's smtpd
 * processes do), from client addresses of their own; a warm-up of `warmupS`, then `seconds`
 * measured: authentications per second and the 99th percentile of the time to each answer.
 */
export async function measureSasl(
  agent: { pid: number; port: number },
  accounts: Array<{ username: string; password: string }>,
  options: { connections: number; seconds: number; warmupS: number },
): Promise<SaslRun> {
  await run(agent.port, accounts, options.connections, options.warmupS);
  const cpuBefore = cpuMicros(agent.pid);
  const measured = await run(agent.port, accounts, options.connections, options.seconds);
  const cpuAfter = cpuMicros(agent.pid);
  return {
    ...measured,
    agentCpuMicrosPerAuth:
      cpuBefore === undefined || cpuAfter === undefined
        ? null
        : (cpuAfter - cpuBefore) / measured.authentications,
  };
}

async function run(
  port: number,
  accounts: Array<{ username: string; password: string }>,
  connections: number,
  seconds: number,
): Promise<Omit<SaslRun, 'agentCpuMicrosPerAuth'>> {
  const until = performance.now() + seconds * 1000;
  const latencies: number[] = [];
  let failures = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async (_, c) => {
      const client = await SaslTestClient.connect(port);
      await client.handshake();
      const rip = `203.0.113.${c + 1}`;
      try {
        while (performance.now() < until) {
          const { username, password } = accounts[(next++ * 7919) % accounts.length];
          const sent = performance.now();
          const answer = await client.plain(username, password, { rip });
          latencies.push(performance.now() - sent);
          if (!answer.startsWith('OK\t')) failures += 1;
        }
      } catch {
        failures += 1;
      } finally {
        client.close();
      }
    }),
  );
  const durationS = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    authPerSecond: latencies.length / durationS,
    authentications: latencies.length,
    p99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? Number.NaN,
    connections,
    durationS,
    failures,
  };
}
