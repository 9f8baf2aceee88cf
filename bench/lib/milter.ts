import { writeFileSync } from 'node:fs';
import { Frame, splitStrings } from '../../src/relay-agent/milter/milter-protocol';
import { PostfixMilterClient, TestMessage } from '../../test/support/relay-agent/postfix-milter-client';
import { residentBytes, sleep } from './service';

const MB = 1024 * 1024;

/** Who sends the bench's messages: a company's relay username and a domain it has verified. */
export interface BenchSender {
  relayUsername: string;
  domain: string;
}

/** A plain-text message with a body of `bodyBytes` from `news@<domain>`, sent after AUTH as `relayUsername`. */
export function benchMessage(bodyBytes: number, sender: BenchSender): TestMessage {
  const line = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.\r\n';
  return {
    mailFrom: `<news@${sender.domain}>`,
    authUser: sender.relayUsername,
    headers: [
      ['From', `Bench <news@${sender.domain}>`],
      ['To', 'jo@example.net'],
      ['Subject', 'Bench'],
      ['Date', 'Sun, 22 Nov 2026 02:41:47 +0000'],
      ['Message-ID', `<bench@${sender.domain}>`],
      ['MIME-Version', '1.0'],
      ['Content-Type', 'text/plain; charset=utf-8'],
    ],
    // Ends with CRLF, as every body after SMTP DATA does (OpenDKIM refuses to sign one that does not).
    body: Buffer.from(`${line.repeat(Math.ceil(bodyBytes / line.length)).slice(0, bodyBytes - 2)}\r\n`),
  };
}

/**
 * Whether the replies to an end of message sign it: a DKIM-Signature added (`h`) or inserted
 * (`i`, as the agent does; OpenDKIM too when the MTA allows it), then accept or continue.
 */
export function signs(replies: Frame[]): boolean {
  const last = replies[replies.length - 1];
  if (!last || (last.command !== 'c' && last.command !== 'a')) return false;
  return replies.some((r) => {
    if (r.command !== 'h' && r.command !== 'i') return false;
    const [name] = splitStrings(r.command === 'i' ? r.data.subarray(4) : r.data);
    return name?.toLowerCase() === 'dkim-signature';
  });
}

/** The replies in short, for error messages. */
export const describeReplies = (replies: Frame[]) =>
  replies.map((r) => `${r.command}(${r.data.toString('latin1').replace(/\0/g, '|').slice(0, 80)})`).join(' ');

export interface MilterRun {
  messages: number;
  perSecond: number;
  p99Ms: number;
  durationS: number;
  /** End-of-message answers without a DKIM-Signature, or connections that broke. */
  failures: number;
  /** The first of them, for the error message. */
  firstFailure?: string;
}

/**
 * Messages signed per second over `connections` connections to a milter on `port`, each
 * connection negotiating and connecting as Postfix's smtpd does, then sending one message after
 * another for `seconds` (headers, body in Postfix's 64 KB chunks, end of message).
 */
export async function measureMilterRate(
  port: number,
  message: TestMessage,
  connections: number,
  seconds: number,
): Promise<MilterRun> {
  const clients = await Promise.all(
    Array.from({ length: connections }, () => PostfixMilterClient.open(port)),
  );
  for (const c of clients) {
    await c.negotiate();
    await c.connectEvent();
  }
  const latencies: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  const fail = (why: string) => {
    failures += 1;
    firstFailure ??= why;
  };
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    clients.map(async (c) => {
      try {
        while (performance.now() < until) {
          const sent = performance.now();
          const replies = await c.message(message);
          if (signs(replies)) latencies.push(performance.now() - sent);
          else fail(`not signed: ${describeReplies(replies)}`);
        }
      } catch (e: unknown) {
        fail(e instanceof Error ? e.message : String(e));
      } finally {
        c.close();
      }
    }),
  );
  const durationS = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    messages: latencies.length,
    perSecond: latencies.length / durationS,
    p99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? Number.NaN,
    durationS,
    failures,
    firstFailure,
  };
}

export interface MilterMemoryRun extends ResidentPeak {
  seconds: number;
}

/**
 * The milter process's (`pid`) resident memory while `count` copies of `message`, each on its
 * own connection, are in flight through it at once (all sent together, body chunks written as
 * the socket drains, as Postfix does).
 */
export async function measureMilterMemory(
  port: number,
  pid: number,
  message: TestMessage,
  count: number,
): Promise<MilterMemoryRun> {
  await sleep(200); // the previous run's connections closed and collected
  const memory = watchResidentPeak(pid);
  const started = performance.now();
  try {
    const clients = await Promise.all(Array.from({ length: count }, () => PostfixMilterClient.open(port)));
    try {
      await Promise.all(
        clients.map(async (c) => {
          await c.negotiate();
          await c.connectEvent();
          const replies = await c.message(message);
          if (!signs(replies))
            throw new Error(`a message of the memory run was not signed: ${describeReplies(replies)}`);
        }),
      );
    } finally {
      for (const c of clients) c.close();
    }
  } finally {
    memory.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  return { ...memory.figures(), seconds };
}

/** A process's resident memory around a run. */
export interface ResidentPeak {
  /** Before the run. */
  rssBeforeMb: number;
  /** The highest VmRSS sampled every 10 ms during it. */
  sampledPeakMb: number;
  /**
   * VmHWM after it: the kernel's own peak, reset before the run where /proc/<pid>/clear_refs lets
   * this process (else the peak of the process's whole life so far); the sampled peak if higher.
   */
  peakMb: number;
  peakReset: boolean;
}

/**
 * Starts watching `pid`'s resident memory: resets its VmHWM where allowed and samples VmRSS
 * every 10 ms until `stop()`; `figures()` reads the peaks (after a last sample).
 */
export function watchResidentPeak(pid: number): { stop(): void; figures(): ResidentPeak } {
  const peakReset = resetPeak(pid);
  const before = residentBytes(pid) ?? Number.NaN;
  let sampled = before;
  const sample = () => (sampled = Math.max(sampled, residentBytes(pid) ?? Number.NaN));
  const sampler = setInterval(sample, 10);
  return {
    stop: () => clearInterval(sampler),
    figures: () => {
      sample();
      const hwm = residentBytes(pid, 'VmHWM') ?? Number.NaN;
      return {
        rssBeforeMb: before / MB,
        sampledPeakMb: sampled / MB,
        peakMb: Math.max(hwm, sampled) / MB,
        peakReset,
      };
    },
  };
}

/** Resets the process's VmHWM to its current RSS (proc(5), clear_refs "5"); false where not allowed. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}
