/**
 * The Sendmail milter protocol (version 6) as Postfix speaks it (`src/milter/milter8.c`):
 * frames of a 4-byte big-endian length, a command byte and data. Pure: no sockets here.
 */

/** Commands from the MTA. */
export const Command = {
  Abort: 'A',
  Body: 'B',
  Connect: 'C',
  Macro: 'D',
  EndOfMessage: 'E',
  Helo: 'H',
  QuitNewConnection: 'K',
  Header: 'L',
  Mail: 'M',
  EndOfHeaders: 'N',
  OptionNegotiation: 'O',
  Quit: 'Q',
  Rcpt: 'R',
  Data: 'T',
  Unknown: 'U',
} as const;

/** Replies to the MTA. */
export const Reply = {
  Continue: 'c',
  InsertHeader: 'i',
  OptionNegotiation: 'O',
  ReplyCode: 'y',
  Tempfail: 't',
} as const;

/** Actions the filter may ask for at end of message (SMFIF_*). */
export const Action = { AddHeaders: 1 << 0 } as const;

/** Protocol flags (SMFIP_*): events not to send, and events the filter will not answer. */
export const Protocol = {
  NoConnect: 1 << 0,
  NoHelo: 1 << 1,
  NoMail: 1 << 2,
  NoRcpt: 1 << 3,
  NoBody: 1 << 4,
  NoHeaders: 1 << 5,
  NoEndOfHeaders: 1 << 6,
  NoReplyHeader: 1 << 7,
  NoUnknown: 1 << 8,
  NoData: 1 << 9,
  NoReplyConnect: 1 << 12,
  NoReplyHelo: 1 << 13,
  NoReplyMail: 1 << 14,
  NoReplyRcpt: 1 << 15,
  NoReplyData: 1 << 16,
  NoReplyUnknown: 1 << 17,
  NoReplyEndOfHeaders: 1 << 18,
  NoReplyBody: 1 << 19,
} as const;

/** The no-reply flag of each event that is answered unless that flag was negotiated. */
export const NO_REPLY_FLAG: Readonly<Record<string, number>> = {
  [Command.Connect]: Protocol.NoReplyConnect,
  [Command.Helo]: Protocol.NoReplyHelo,
  [Command.Mail]: Protocol.NoReplyMail,
  [Command.Rcpt]: Protocol.NoReplyRcpt,
  [Command.Data]: Protocol.NoReplyData,
  [Command.Unknown]: Protocol.NoReplyUnknown,
  [Command.Header]: Protocol.NoReplyHeader,
  [Command.EndOfHeaders]: Protocol.NoReplyEndOfHeaders,
  [Command.Body]: Protocol.NoReplyBody,
};

export const MILTER_VERSION = 6;

export class MilterProtocolError extends Error {}

/**
 * The largest frame the agent takes (quality.md: a frame over 256 KiB closes the connection).
 * Postfix's largest is a body chunk of 65,535 bytes plus its command byte; a header frame is
 * bounded by header_size_limit (100 KiB). The length is checked as soon as its 4 bytes arrive,
 * so a client announcing more costs the agent nothing.
 */
export const MAX_MILTER_FRAME_BYTES = 256 * 1024;

export interface Frame {
  command: string;
  data: Buffer;
}

/**
 * Cuts a byte stream into frames, whatever the packets' boundaries. Keeps the received chunks
 * as they are until a frame is complete, so a body chunk is copied once.
 */
export class FrameReader {
  private readonly chunks: Buffer[] = [];
  private buffered = 0;

  constructor(private readonly maxFrameBytes: number = MAX_MILTER_FRAME_BYTES) {}

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
  }

  /** Bytes received and not yet returned as frames. */
  get pending(): number {
    return this.buffered;
  }

  /** The next complete frame, or null until more bytes arrive; throws on an impossible length. */
  next(): Frame | null {
    if (this.buffered < 4) return null;
    const length = this.peekLength();
    if (length < 1 || length > this.maxFrameBytes) {
      throw new MilterProtocolError(`frame length ${length} outside 1..${this.maxFrameBytes}`);
    }
    if (this.buffered < 4 + length) return null;
    const frame = this.take(4 + length);
    return { command: String.fromCharCode(frame[4]), data: frame.subarray(5) };
  }

  private peekLength(): number {
    const first = this.chunks[0];
    if (first.length >= 4) return first.readUInt32BE(0);
    return this.copy(4).readUInt32BE(0);
  }

  /** The first n buffered bytes (without consuming them). */
  private copy(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    let written = 0;
    for (const chunk of this.chunks) {
      written += chunk.copy(out, written, 0, Math.min(chunk.length, n - written));
      if (written === n) break;
    }
    return out;
  }

  private take(n: number): Buffer {
    const first = this.chunks[0];
    let out: Buffer;
    if (first.length >= n) {
      out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
    } else {
      out = this.copy(n);
      let left = n;
      while (left > 0) {
        const chunk = this.chunks[0];
        if (chunk.length <= left) {
          left -= chunk.length;
          this.chunks.shift();
        } else {
          this.chunks[0] = chunk.subarray(left);
          left = 0;
        }
      }
    }
    this.buffered -= n;
    return out;
  }
}

/** One frame's bytes. */
export function encodeFrame(command: string, data: Buffer = Buffer.alloc(0)): Buffer {
  const frame = Buffer.allocUnsafe(5 + data.length);
  frame.writeUInt32BE(1 + data.length, 0);
  frame[4] = command.charCodeAt(0);
  data.copy(frame, 5);
  return frame;
}

/** NUL-terminated strings, byte for byte (latin1 keeps 8-bit header bytes as they came). */
export function cStrings(...values: string[]): Buffer {
  return Buffer.concat(values.flatMap((v) => [Buffer.from(v, 'latin1'), Buffer.alloc(1)]));
}

/** The NUL-terminated strings of a frame's data; a last string without its NUL is kept. */
export function splitStrings(data: Buffer): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < data.length) {
    let end = data.indexOf(0, start);
    if (end < 0) end = data.length;
    out.push(data.toString('latin1', start, end));
    start = end + 1;
  }
  return out;
}

export interface OptionNegotiation {
  version: number;
  actions: number;
  protocol: number;
}

export function decodeOptionNegotiation(data: Buffer): OptionNegotiation {
  if (data.length < 12) throw new MilterProtocolError('short option negotiation');
  return { version: data.readUInt32BE(0), actions: data.readUInt32BE(4), protocol: data.readUInt32BE(8) };
}

export function encodeOptionNegotiation(o: OptionNegotiation): Buffer {
  const data = Buffer.allocUnsafe(12);
  data.writeUInt32BE(o.version, 0);
  data.writeUInt32BE(o.actions >>> 0, 4);
  data.writeUInt32BE(o.protocol >>> 0, 8);
  return encodeFrame(Reply.OptionNegotiation, data);
}

export interface ConnectInfo {
  hostname: string;
  /** `4` inet, `6` inet6, `L` unix socket, `U` unknown. */
  family: string;
  port: number;
  address: string;
}

export function decodeConnect(data: Buffer): ConnectInfo {
  const nul = data.indexOf(0);
  if (nul < 0 || nul + 1 >= data.length) throw new MilterProtocolError('malformed connect');
  const hostname = data.toString('latin1', 0, nul);
  const family = String.fromCharCode(data[nul + 1]);
  if (family === 'U' || data.length < nul + 4) return { hostname, family, port: 0, address: '' };
  const port = data.readUInt16BE(nul + 2);
  const [address = ''] = splitStrings(data.subarray(nul + 4));
  return { hostname, family, port, address };
}

/** A macro frame: the event it precedes and its name/value pairs, names without braces. */
export function decodeMacros(data: Buffer): { event: string; macros: Map<string, string> } {
  if (data.length < 1) throw new MilterProtocolError('empty macro frame');
  const strings = splitStrings(data.subarray(1));
  const macros = new Map<string, string>();
  for (let i = 0; i + 1 < strings.length; i += 2) {
    macros.set(strings[i].replace(/^\{(.*)\}$/, '$1'), strings[i + 1]);
  }
  return { event: String.fromCharCode(data[0]), macros };
}

export function decodeHeader(data: Buffer): { name: string; value: string } {
  const [name, value] = splitStrings(data);
  if (!name) throw new MilterProtocolError('header without a name');
  return { name, value: value ?? '' };
}

export const continueReply = (): Buffer => encodeFrame(Reply.Continue);
export const tempfailReply = (): Buffer => encodeFrame(Reply.Tempfail);

/** An SMTP reply for the message, `550 5.7.1 …` (Postfix reads `%` as a format character). */
export function replyCode(text: string): Buffer {
  return encodeFrame(Reply.ReplyCode, cStrings(text.replace(/%/g, '%%')));
}

/** SMFIR_INSHEADER: index 0 is the top of the message. */
export function insertHeader(index: number, name: string, value: string): Buffer {
  const index32 = Buffer.allocUnsafe(4);
  index32.writeUInt32BE(index, 0);
  return encodeFrame(Reply.InsertHeader, Buffer.concat([index32, cStrings(name, value)]));
}
