import { connect, Socket } from 'node:net';
import {
  cStrings,
  Command,
  decodeOptionNegotiation,
  encodeFrame,
  Frame,
  FrameReader,
  NO_REPLY_FLAG,
  OptionNegotiation,
  Protocol,
} from '../../../src/relay-agent/milter/milter-protocol';

/** What Postfix 3.7 offers with `milter_protocol = 6`: every action and every protocol flag of version 6. */
export const POSTFIX_OFFER: OptionNegotiation = { version: 6, actions: 0x1ff, protocol: 0x1fffff };

/** Postfix's body chunk (MILTER_CHUNK_SIZE in milter8.c). */
export const POSTFIX_CHUNK = 65535;

export interface ClientConnect {
  hostname: string;
  family: '4' | '6' | 'L' | 'U';
  port: number;
  address: string;
}

export interface TestMessage {
  /** MAIL FROM as Postfix sends it, `<a@b>`; `<>` for a bounce. */
  mailFrom: string;
  authUser?: string;
  /** Name and value as Postfix sends them: the space after the colon eaten, folded lines joined by LF. */
  headers: Array<[string, string]>;
  body: Buffer | string | Iterable<Buffer>;
}

/**
 * The Postfix side of the milter protocol, frame for frame as milter8.c writes it (macros before
 * each event, events the milter declined left out, replies awaited only where it must answer),
 * for tests and the bench. Replies are read in order with `reply()`.
 */
export class PostfixMilterClient {
  private readonly reader = new FrameReader(16 * 1024 * 1024);
  private readonly replies: Frame[] = [];
  private waiters: Array<{ resolve: (f: Frame) => void; reject: (e: Error) => void }> = [];
  private closed: Error | null = null;
  /** Every byte the milter wrote, in order. */
  readonly received: Buffer[] = [];
  protocol = 0;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.received.push(chunk);
      this.reader.push(chunk);
      for (let frame = this.reader.next(); frame; frame = this.reader.next()) {
        const waiter = this.waiters.shift();
        if (waiter) waiter.resolve(frame);
        else this.replies.push(frame);
      }
    });
    socket.on('close', () => {
      this.closed = new Error('milter closed the connection');
      for (const waiter of this.waiters.splice(0)) waiter.reject(this.closed);
    });
    socket.on('error', () => undefined);
  }

  static open(port: number, host = '127.0.0.1'): Promise<PostfixMilterClient> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, host, () => {
        socket.off('error', reject);
        socket.setNoDelay(true);
        resolve(new PostfixMilterClient(socket));
      });
      socket.once('error', reject);
    });
  }

  reply(): Promise<Frame> {
    const ready = this.replies.shift();
    if (ready) return Promise.resolve(ready);
    if (this.closed) return Promise.reject(this.closed);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** Resolves when the milter closes the connection. */
  whenClosed(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => this.socket.once('close', () => resolve()));
  }

  /** Writes bytes, waiting for the socket to drain (a large body is not buffered here). */
  async write(bytes: Buffer): Promise<void> {
    if (!this.socket.write(bytes)) await new Promise<void>((resolve) => this.socket.once('drain', resolve));
  }

  async negotiate(offer: OptionNegotiation = POSTFIX_OFFER): Promise<OptionNegotiation> {
    const data = Buffer.alloc(12);
    data.writeUInt32BE(offer.version, 0);
    data.writeUInt32BE(offer.actions, 4);
    data.writeUInt32BE(offer.protocol, 8);
    await this.write(encodeFrame(Command.OptionNegotiation, data));
    const reply = await this.reply();
    if (reply.command !== 'O') throw new Error(`unexpected reply ${reply.command} to option negotiation`);
    const agreed = decodeOptionNegotiation(reply.data);
    this.protocol = agreed.protocol;
    return agreed;
  }

  async connectEvent(
    c: ClientConnect = { hostname: 'client.example', family: '4', port: 40000, address: '192.0.2.10' },
  ): Promise<void> {
    await this.write(this.macros('C', { j: 'relay.test', '{daemon_name}': 'smtpd', v: 'Postfix 3.7.11' }));
    const port = Buffer.alloc(2);
    port.writeUInt16BE(c.port, 0);
    const data =
      c.family === 'U'
        ? Buffer.concat([cStrings(c.hostname), Buffer.from('U')])
        : Buffer.concat([cStrings(c.hostname), Buffer.from(c.family), port, cStrings(c.address)]);
    await this.event('C', data, Protocol.NoConnect);
    await this.write(this.macros('H', {}));
    await this.event('H', cStrings('client.example'), Protocol.NoHelo);
  }

  /** The frames of a message from MAIL to the last body chunk, as Postfix writes them. */
  *messageFrames(m: TestMessage, chunkSize = POSTFIX_CHUNK): Generator<Buffer> {
    const mailMacros: Record<string, string> = { i: 'C913716C112', '{mail_addr}': m.mailFrom.slice(1, -1) };
    if (m.authUser) Object.assign(mailMacros, { '{auth_type}': 'PLAIN', '{auth_authen}': m.authUser });
    yield this.macros('M', mailMacros);
    yield* this.eventFrames('M', cStrings(m.mailFrom), Protocol.NoMail);
    yield this.macros('R', { i: 'C913716C112', '{rcpt_addr}': 'jo@example.net' });
    yield* this.eventFrames('R', cStrings('<jo@example.net>'), Protocol.NoRcpt);
    yield this.macros('T', { i: 'C913716C112' });
    yield* this.eventFrames('T', Buffer.alloc(0), Protocol.NoData);
    for (const [name, value] of m.headers) {
      yield this.macros('L', { i: 'C913716C112' });
      yield* this.eventFrames('L', Buffer.from(`${name}\0${value}\0`, 'utf8'), Protocol.NoHeaders);
    }
    yield this.macros('N', { i: 'C913716C112' });
    yield* this.eventFrames('N', Buffer.alloc(0), Protocol.NoEndOfHeaders);
    for (const chunk of chunks(m.body, chunkSize)) {
      yield this.macros('B', { i: 'C913716C112' });
      yield* this.eventFrames('B', chunk, Protocol.NoBody);
    }
    yield this.macros('E', { i: 'C913716C112' });
    yield encodeFrame(Command.EndOfMessage);
  }

  /**
   * Sends a message and returns the milter's replies to its end: edits, then the final answer.
   * Events the milter answers (none once it asked for no replies) must be answered `c`.
   */
  async message(m: TestMessage, chunkSize = POSTFIX_CHUNK): Promise<Frame[]> {
    let answered = 0;
    for (const frame of this.messageFrames(m, chunkSize)) {
      await this.write(frame);
      if (this.expectsReply(frame)) answered += 1;
    }
    for (; answered > 0; answered -= 1) {
      const reply = await this.reply();
      if (reply.command !== 'c') throw new Error(`unexpected reply ${reply.command} before end of message`);
    }
    return this.endReplies();
  }

  /** The replies to one end of message: edits up to the final answer. */
  async endReplies(): Promise<Frame[]> {
    const out: Frame[] = [];
    for (;;) {
      const reply = await this.reply();
      out.push(reply);
      if ('acdrty'.includes(reply.command)) return out;
    }
  }

  abort(): Promise<void> {
    return this.write(encodeFrame(Command.Abort));
  }

  quit(): Promise<void> {
    return this.write(encodeFrame(Command.Quit));
  }

  close(): void {
    this.socket.destroy();
  }

  macros(event: string, values: Record<string, string>): Buffer {
    return encodeFrame(
      Command.Macro,
      Buffer.concat([Buffer.from(event), cStrings(...Object.entries(values).flat())]),
    );
  }

  private *eventFrames(command: string, data: Buffer, skipFlag: number): Generator<Buffer> {
    if ((this.protocol & skipFlag) === 0) yield encodeFrame(command, data);
  }

  private async event(command: string, data: Buffer, skipFlag: number): Promise<void> {
    if (this.protocol & skipFlag) return;
    await this.write(encodeFrame(command, data));
    if ((this.protocol & NO_REPLY_FLAG[command]) === 0) {
      const reply = await this.reply();
      if (reply.command !== 'c') throw new Error(`unexpected reply ${reply.command} to ${command}`);
    }
  }

  private expectsReply(frame: Buffer): boolean {
    const command = String.fromCharCode(frame[4]);
    return command in NO_REPLY_FLAG && (this.protocol & NO_REPLY_FLAG[command]) === 0;
  }
}

function* chunks(body: Buffer | string | Iterable<Buffer>, size: number): Generator<Buffer> {
  if (typeof body === 'string') body = Buffer.from(body, 'utf8');
  if (!Buffer.isBuffer(body)) {
    yield* body;
    return;
  }
  for (let at = 0; at < body.length; at += size) yield body.subarray(at, at + size);
}
