/**
 * `npm run bench:sasl`: the relay agent's SMTP AUTH figure of quality.md alone (≥ 5,000 AUTH
 * PLAIN/s, p99 ≤ 10 ms at 50 connections) on 10,000 companies, on SQLite or, with
 * BENCH_DATABASE_URL, a fresh PostgreSQL database.
 */
import { randomBytes } from 'node:crypto';
import { benchDatabase } from './lib/database';
import { seedRelayData } from './lib/relay-data';
import { measureSasl, seedRelayPasswords } from './lib/sasl';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 3);

async function main(): Promise<void> {
  const db = await benchDatabase();
  try {
    console.log(
      `SMTP AUTH on ${db.kind}: ${WARMUP_S} s warm-up, ${DURATION_S} s at ${CONNECTIONS} connections…`,
    );
    const run = await measureSasl(
      {
        NODE_ENV: 'development',
        LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
        ...db.env,
        ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      },
      async () => {
        const { relayUsernames } = await seedRelayData(db, { companies: 10_000, suppressed: 0 });
        return seedRelayPasswords(db, relayUsernames);
      },
      { connections: CONNECTIONS, seconds: DURATION_S, warmupS: WARMUP_S },
    );
    const verdict = run.authPerSecond >= 5_000 && run.p99Ms <= 10 ? 'meets' : 'misses';
    console.log(
      `relay agent SMTP AUTH (AUTH PLAIN, right password): ${Math.round(run.authPerSecond)} AUTH/s, ` +
        `p99 ${run.p99Ms.toFixed(2)} ms, ${run.authentications} in ${run.durationS.toFixed(1)} s, ` +
        `${run.failures} failures, agent CPU ${run.agentCpuMicrosPerAuth.toFixed(0)} µs an AUTH — ${verdict} quality.md (≥ 5,000/s, p99 ≤ 10 ms)`,
    );
    if (run.failures) process.exitCode = 1;
  } finally {
    await db.drop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
