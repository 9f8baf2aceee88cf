import { connect, Socket } from 'node:net';
import { cStrings, Command, encodeFrame } from '../../src/relay-agent/milter/milter-protocol';
import { PostfixMilterClient, TestMessage } from '../../test/support/relay-agent/postfix-milter-client';
import { describeReplies, ResidentPeak, signs, watchResidentPeak } from './milter';
import { sleep } from './service';

const MB = 1024 * 1024;

export interface HostileLoad {
  /** Idle connections opened on each port (policy, SMTP AUTH, milter). */
  idle: number;
  /** Milter connections each announcing a frame of `frameBytes` and sending all of it but its last byte. */
  frameAnnouncers: number;
  frameBytes: number;
  /** Milter connections each sending `headerBytes` of header frames after MAIL, and no end of headers. */
  headerSenders: number;
  headerBytes: number;
}

/** quality.md "relay agent under hostile local clients". */
export const QUALITY_HOSTILE_LOAD: HostileLoad = {
  idle: 1000,
  frameAnnouncers: 300,
  frameBytes: MB,
  headerSenders: 200,
  headerBytes: MB,
};

/** What became of one kind of connection: opened by the bench, closed by the agent before the end. */
export interface ConnectionCount {
  opened: number;
  /** Still open when the normal messages had been answered. */
  held: number;
  /** Closed by the agent (the connection limit, or a protocol limit). */
  closedByAgent: number;
}

export interface HostileRun extends ResidentPeak {
  idle: Record<'policy' | 'sasl' | 'milter', ConnectionCount>;
  frameAnnouncers: ConnectionCount;
  headerSenders: ConnectionCount & { bytesSentMb: number };
  /** The normal messages through the connection opened before the flood: while it ran, then once all of it was in. */
  normal: Array<{ when: string; signed: boolean; ms: number; replies: string }>;
  seconds: number;
}

interface Tracked {
  socket: Socket;
  closedByAgent: boolean;
}

/** A TCP connection that discards what it reads and notes whether the agent closed it. */
function openRaw(port: number): Promise<Tracked> {
  return new Promise((resolve) => {
    const tracked: Tracked = { socket: connect(port, '127.0.0.1'), closedByAgent: false };
    const { socket } = tracked;
    socket.on('error', () => undefined);
    socket.on('data', () => undefined);
    socket.once('close', () => (tracked.closedByAgent = true));
    socket.once('connect', () => resolve(tracked));
    // Refused before the handshake completed (backlog full): counted as closed by the agent.
    socket.once('close', () => resolve(tracked));
  });
}

/** `count` connections opened `batch` at a time (the listen backlog is 511). */
async function inBatches<T>(count: number, open: () => Promise<T>, batch = 100): Promise<T[]> {
  const out: T[] = [];
  for (let at = 0; at < count; at += batch) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(batch, count - at) }, open))));
  }
  return out;
}

const count = (conns: Tracked[]): ConnectionCount => {
  const closed = conns.filter((c) => c.closedByAgent).length;
  return { opened: conns.length, held: conns.length - closed, closedByAgent: closed };
};

/** Writes and waits for the socket to take it; false once the agent closed the connection. */
function write(socket: Socket, bytes: Buffer): Promise<boolean> {
  if (socket.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onClose = () => resolve(false);
    socket.once('close', onClose);
    const flushed = socket.write(bytes, (error) => {
      if (error) resolve(false);
    });
    if (flushed) {
      socket.off('close', onClose);
      resolve(true);
    } else
      socket.once('drain', () => {
        socket.off('close', onClose);
        resolve(true);
      });
  });
}

/** The option negotiation Postfix opens with (what PostfixMilterClient.negotiate writes), reply not awaited. */
function negotiation(): Buffer {
  const data = Buffer.alloc(12);
  data.writeUInt32BE(6, 0);
  data.writeUInt32BE(0x1ff, 4);
  data.writeUInt32BE(0x1fffff, 8);
  return encodeFrame(Command.OptionNegotiation, data);
}

/** A frame header announcing `bytes` (command byte included) of a body chunk, and all its data but the last byte. */
function announcedFrame(bytes: number): Buffer {
  const frame = Buffer.alloc(4 + bytes - 1, 0x61);
  frame.writeUInt32BE(bytes, 0);
  frame[4] = Command.Body.charCodeAt(0);
  return frame;
}

/**
 * CONNECT, MAIL, then `bytes` of header frames (`X-Pad-n: …` of about 1,000 bytes each, as
 * Postfix would pass a long header block) and no end of headers. One buffer, shared by every
 * sender: the socket queues it without copying.
 */
function headerFlood(bytes: number): Buffer {
  const frames = [
    encodeFrame(
      Command.Connect,
      Buffer.concat([cStrings('client.example'), Buffer.from('4\x9c\x40', 'latin1'), cStrings('192.0.2.66')]),
    ),
    encodeFrame(Command.Mail, cStrings('<flood@hostile.example>')),
  ];
  const value = 'x'.repeat(990);
  let sent = 0;
  for (let n = 0; sent < bytes; n++) {
    const frame = encodeFrame(Command.Header, cStrings(`X-Pad-${n}`, value));
    frames.push(frame);
    sent += frame.length;
  }
  return Buffer.concat(frames);
}

/**
 * The agent (`pid`) under quality.md's hostile local clients: a milter connection opened first,
 * as a Postfix smtpd holds one; then, on the milter port, `frameAnnouncers` connections each
 * announcing a `frameBytes` frame and sending all of it but its last byte, and `headerSenders`
 * connections each negotiating, sending CONNECT, MAIL and `headerBytes` of headers without end of
 * headers; meanwhile `idle` connections on each port that send nothing. One normal message goes
 * through the first connection while the flood is written, and one once all of it is in; both
 * must come back signed. The agent's resident memory is sampled every 10 ms throughout.
 */
export async function measureHostileClients(
  ports: { policy: number; sasl: number; milter: number },
  pid: number,
  message: TestMessage,
  load: HostileLoad = QUALITY_HOSTILE_LOAD,
): Promise<HostileRun> {
  await sleep(200); // the previous run's connections closed and collected
  const memory = watchResidentPeak(pid);
  const started = performance.now();
  const all: Tracked[] = [];
  let normalClient: PostfixMilterClient | undefined;
  try {
    normalClient = await PostfixMilterClient.open(ports.milter);
    await normalClient.negotiate();
    await normalClient.connectEvent();
    const normal: HostileRun['normal'] = [];
    let floodWritten = false;
    const sendNormal = async (when: string) => {
      const sent = performance.now();
      const wasWritten = floodWritten;
      const replies = await (normalClient as PostfixMilterClient).message(message);
      normal.push({
        // Honest about overlap: the flood may have been written before the answer came.
        when: wasWritten || !floodWritten ? when : `${when} (the flood was all written before the answer)`,
        signed: signs(replies),
        ms: performance.now() - sent,
        replies: describeReplies(replies),
      });
    };

    const frame = announcedFrame(load.frameBytes);
    const flood = headerFlood(load.headerBytes);
    const announcers: Tracked[] = [];
    const senders: Tracked[] = [];
    let headerBytesSent = 0;
    const hostile = Promise.all([
      inBatches(load.frameAnnouncers, async () => {
        const c = await openRaw(ports.milter);
        announcers.push(c);
        all.push(c);
        if (await write(c.socket, negotiation())) await write(c.socket, frame);
      }),
      inBatches(load.headerSenders, async () => {
        const c = await openRaw(ports.milter);
        senders.push(c);
        all.push(c);
        if (await write(c.socket, negotiation())) {
          // In pieces of about 64 KB, as a socket takes them.
          for (let at = 0; at < flood.length; at += 65536) {
            const piece = flood.subarray(at, at + 65536);
            if (!(await write(c.socket, piece))) break;
            headerBytesSent += piece.length;
          }
        }
      }),
    ]);

    void hostile.then(() => (floodWritten = true));
    const during = sendNormal('while the milter flood was written');
    const idle = { policy: [] as Tracked[], sasl: [] as Tracked[], milter: [] as Tracked[] };
    for (const name of ['policy', 'sasl', 'milter'] as const) {
      idle[name] = await inBatches(load.idle, () => openRaw(ports[name]));
      all.push(...idle[name]);
    }
    await during;
    await hostile;
    await sleep(200); // what the agent read of it handled
    await sendNormal('with all of it in');
    await sleep(100);
    const seconds = (performance.now() - started) / 1000;
    const result = {
      idle: { policy: count(idle.policy), sasl: count(idle.sasl), milter: count(idle.milter) },
      frameAnnouncers: count(announcers),
      headerSenders: { ...count(senders), bytesSentMb: headerBytesSent / MB / Math.max(1, senders.length) },
      normal,
      seconds,
    };
    return { ...memory.figures(), ...result };
  } finally {
    memory.stop();
    normalClient?.close();
    for (const c of all) c.socket.destroy();
  }
}
