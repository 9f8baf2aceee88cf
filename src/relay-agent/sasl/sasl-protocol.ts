/**
 * The server side of the Dovecot authentication protocol 1.x as Postfix's
 * `smtpd_sasl_type = dovecot` speaks it (integrations.md "Relay agent", SMTP AUTH; Postfix's
 * `src/xsasl/xsasl_dovecot_server.c`): tab-separated fields, one request or answer a line.
 * Pure: no sockets, no clock.
 */

/** A line longer than this (without its LF) closes the connection. */
export const MAX_LINE_BYTES = 16 * 1024;

export type SaslMechanism = 'PLAIN' | 'LOGIN';

/** The one failure reason, the same for an unknown username and a wrong password. */
export const FAILURE_REASON = 'Authentication failed';

const USERNAME_PROMPT = Buffer.from('Username:').toString('base64');
const PASSWORD_PROMPT = Buffer.from('Password:').toString('base64');

/** Written on connect. MECH before SPID: Postfix takes SPID before any MECH for the wrong socket. */
export function handshake(pid: number, connectionId: number, cookie: string): string {
  return (
    'VERSION\t1\t2\n' +
    'MECH\tPLAIN\tplaintext\n' +
    'MECH\tLOGIN\tplaintext\n' +
    `SPID\t${pid}\n` +
    `CUID\t${connectionId}\n` +
    `COOKIE\t${cookie}\n` +
    'DONE\n'
  );
}

export function okLine(id: string, username: string): string {
  return `OK\t${id}\tuser=${username}\n`;
}

export function failLine(id: string): string {
  return `FAIL\t${id}\treason=${FAILURE_REASON}\n`;
}

/** Something the client sent that is not the protocol: the connection is closed. */
export class SaslProtocolError extends Error {}

/** Cuts LF-terminated lines out of a byte stream, refusing lines over MAX_LINE_BYTES. */
export class LineReader {
  private buffer: Buffer = Buffer.alloc(0);
  /** Where the search for the next LF resumes (bytes before it hold none). */
  private scanned = 0;

  constructor(private readonly maxLine = MAX_LINE_BYTES) {}

  push(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
  }

  /** The next complete line (without LF, a CR before it kept), or null until more bytes come. */
  next(): string | null {
    const end = this.buffer.indexOf(0x0a, this.scanned);
    if (end === -1) {
      this.scanned = this.buffer.length;
      if (this.buffer.length > this.maxLine) throw new SaslProtocolError('line too long');
      return null;
    }
    if (end > this.maxLine) throw new SaslProtocolError('line too long');
    const line = this.buffer.toString('latin1', 0, end);
    this.buffer = this.buffer.subarray(end + 1);
    this.scanned = 0;
    return line;
  }
}

/** A password and username to check, taken from a finished conversation. */
export interface SaslCredentials {
  id: string;
  mechanism: SaslMechanism;
  username: string;
  password: string;
  /** `rip`: the SMTP client's address as Postfix saw it. */
  clientAddress: string | undefined;
}

/** Why a request failed without a check, for the log (never the password or the SASL data). */
export interface SaslRefusal {
  reason: string;
  mechanism?: string;
  username?: string;
  clientAddress?: string;
}

/**
 * What to do for one line: write a line (a FAIL says why in `refused`), check credentials (then
 * OK or FAIL), or nothing.
 */
export type SaslStep = { reply: string; refused?: SaslRefusal } | { check: SaslCredentials } | null;

interface Conversation {
  id: string;
  mechanism: SaslMechanism;
  clientAddress: string | undefined;
  /** LOGIN: the username, once given. */
  username?: string;
}

const ID = /^\d{1,10}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * One connection's conversations. At most one is unfinished at a time: Postfix sends its
 * requests one after the other, and a new AUTH means the client gave up the previous one
 * (Postfix answers the SMTP client's `*` itself and tells the agent nothing).
 */
export class SaslSession {
  private pending: Conversation | undefined;

  handle(line: string): SaslStep {
    const fields = line.split('\t');
    switch (fields[0]) {
      case 'AUTH':
        return this.auth(fields);
      case 'CONT':
        return this.cont(fields);
      case 'VERSION':
        if (fields[1] !== '1') throw new SaslProtocolError(`unsupported protocol version ${fields[1]}`);
        return null;
      default:
        // CPID and whatever a later client may add.
        return null;
    }
  }

  private auth(fields: string[]): SaslStep {
    this.pending = undefined;
    const id = requestId(fields[1]);
    const mechanism = fields[2]?.toUpperCase();
    let clientAddress: string | undefined;
    let response: string | undefined;
    for (const field of fields.slice(3)) {
      if (field.startsWith('rip=')) clientAddress = field.slice(4);
      else if (field.startsWith('resp=')) response = field.slice(5);
    }
    if (mechanism !== 'PLAIN' && mechanism !== 'LOGIN') {
      return refuse(id, { reason: 'mechanism not offered', mechanism: fields[2], clientAddress });
    }
    const conversation: Conversation = { id, mechanism, clientAddress };
    if (response === undefined) {
      this.pending = conversation;
      return { reply: `CONT\t${id}\t${mechanism === 'LOGIN' ? USERNAME_PROMPT : ''}\n` };
    }
    return this.respond(conversation, response);
  }

  private cont(fields: string[]): SaslStep {
    const id = requestId(fields[1]);
    const conversation = this.pending;
    if (!conversation || conversation.id !== id)
      return refuse(id, { reason: 'no conversation with this id' });
    this.pending = undefined;
    return this.respond(conversation, fields[2] ?? '');
  }

  /** The client's (base64) response to where `conversation` stands. */
  private respond(conversation: Conversation, response: string): SaslStep {
    const { id, mechanism, clientAddress } = conversation;
    const data = decodeBase64(response);
    if (data === null) return refuse(id, { reason: 'invalid base64', mechanism, clientAddress });
    if (mechanism === 'PLAIN') {
      const credentials = parsePlain(data);
      if ('reason' in credentials) return refuse(id, { ...credentials, mechanism, clientAddress });
      return { check: { id, mechanism, clientAddress, ...credentials } };
    }
    if (conversation.username === undefined) {
      this.pending = { ...conversation, username: data.toString('utf8') };
      return { reply: `CONT\t${id}\t${PASSWORD_PROMPT}\n` };
    }
    return {
      check: {
        id,
        mechanism,
        clientAddress,
        username: conversation.username,
        password: data.toString('utf8'),
      },
    };
  }
}

function refuse(id: string, refused: SaslRefusal): SaslStep {
  return { reply: failLine(id), refused };
}

function requestId(field: string | undefined): string {
  if (field === undefined || !ID.test(field)) throw new SaslProtocolError('request without a valid id');
  return field;
}

/** Strict base64 (what Postfix forwards after its own check), or null. */
export function decodeBase64(text: string): Buffer | null {
  return BASE64.test(text) ? Buffer.from(text, 'base64') : null;
}

/**
 * RFC 4616: `authzid NUL authcid NUL password`. Only the user itself may be asked for: an
 * authzid other than the authcid (compared as usernames are, without case) is refused.
 */
export function parsePlain(
  data: Buffer,
): { username: string; password: string } | { reason: string; username?: string } {
  const first = data.indexOf(0);
  const second = first === -1 ? -1 : data.indexOf(0, first + 1);
  if (second === -1 || data.indexOf(0, second + 1) !== -1) return { reason: 'malformed PLAIN response' };
  const authzid = data.toString('utf8', 0, first);
  const username = data.toString('utf8', first + 1, second);
  const password = data.toString('utf8', second + 1);
  if (username === '' || password === '') return { reason: 'empty username or password', username };
  if (authzid !== '' && authzid.toLowerCase() !== username.toLowerCase()) {
    return { reason: 'authorization identity is another user', username };
  }
  return { username, password };
}
