import { MilterDecisions } from '../../src/relay-agent/milter/milter-decisions';
import { MilterServer } from '../../src/relay-agent/milter/milter-server';
import { dkimTestKey } from '../../src/relay-agent/milter/testing/dkim-test-key';
import { PostfixMilterClient, TestMessage } from '../../src/relay-agent/milter/testing/postfix-milter-client';

/** Decisions answered from memory: the figure is the milter's own cost (protocol, hashing, signing). */
export function memoryDecisions(): MilterDecisions {
  const key = { selector: 'rs1', privateKeyPem: dkimTestKey().privateKeyPem };
  return {
    companyOf: () => Promise.resolve({ id: 1 }),
    ownerOf: (domain) => Promise.resolve(domain === 'acme.test' ? 1 : null),
    signingKey: (domain) => Promise.resolve(domain === 'acme.test' ? key : null),
  };
}

export function benchMessage(bodyBytes: number): TestMessage {
  const line = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.\r\n';
  return {
    mailFrom: '<news@acme.test>',
    authUser: 'r-acme',
    headers: [
      ['From', 'Acme <news@acme.test>'],
      ['To', 'jo@example.net'],
      ['Subject', 'Bench'],
      ['Date', 'Sun, 22 Nov 2026 02:41:47 +0000'],
      ['Message-ID', '<bench@acme.test>'],
      ['MIME-Version', '1.0'],
      ['Content-Type', 'text/plain; charset=utf-8'],
    ],
    body: Buffer.from(line.repeat(Math.ceil(bodyBytes / line.length)).slice(0, bodyBytes)),
  };
}

/** Messages signed per second over `connections` connections, each sending one message after another. */
export async function measureMilterRate(
  port: number,
  connections: number,
  durationS: number,
): Promise<{ messages: number; perSecond: number; failures: number }> {
  const message = benchMessage(10 * 1024);
  const clients = await Promise.all(
    Array.from({ length: connections }, () => PostfixMilterClient.open(port)),
  );
  for (const c of clients) {
    await c.negotiate();
    await c.connectEvent();
  }
  let messages = 0;
  let failures = 0;
  const started = process.hrtime.bigint();
  const deadline = Date.now() + durationS * 1000;
  await Promise.all(
    clients.map(async (c) => {
      while (Date.now() < deadline) {
        const replies = await c.message(message);
        if (replies.length === 2 && replies[0].command === 'i') messages += 1;
        else failures += 1;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  for (const c of clients) c.close();
  return { messages, perSecond: messages / seconds, failures };
}

/** Peak RSS of this process while `count` messages of `bodyBytes` are in flight at once. */
export async function measureMilterMemory(
  port: number,
  count: number,
  bodyBytes: number,
): Promise<{ rssBeforeMb: number; peakRssMb: number }> {
  const message = benchMessage(bodyBytes);
  global.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
  await Promise.all(
    Array.from({ length: count }, async () => {
      const c = await PostfixMilterClient.open(port);
      await c.negotiate();
      await c.connectEvent();
      const replies = await c.message(message);
      if (replies[0].command !== 'i') throw new Error('not signed');
      c.close();
    }),
  );
  clearInterval(sampler);
  return { rssBeforeMb: before / 1048576, peakRssMb: peak / 1048576 };
}

/** Standalone: `node -r ts-node/register/transpile-only bench/lib/milter.ts`. */
async function main(): Promise<void> {
  const server = new MilterServer(memoryDecisions());
  const port = await server.listen(0, '127.0.0.1');
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
  const duration = Number(process.env.BENCH_DURATION ?? 10);
  await measureMilterRate(port, connections, 2);
  const rate = await measureMilterRate(port, connections, duration);
  console.log(
    `milter, ${connections} connections, 10 KB messages signed: ${Math.round(rate.perSecond)} messages/s (${rate.messages} in ${duration} s, ${rate.failures} failures)`,
  );
  const memory = await measureMilterMemory(port, 50, 10 * 1024 * 1024);
  console.log(
    `milter, 50 messages of 10 MB in flight: RSS ${Math.round(memory.rssBeforeMb)} MB before, peak ${Math.round(memory.peakRssMb)} MB (client and milter in one process)`,
  );
  await server.close();
}

if (require.main === module) void main();
