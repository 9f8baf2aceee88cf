import { Logger, LoggerService } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { isIP } from 'node:net';
import { types } from 'node:util';
import { createTransport } from 'nodemailer';
import type {
  Mail,
  NodemailerError,
  SendMailOptions,
  SMTPPoolOptions,
  SMTPPoolSentMessageInfo,
} from 'nodemailer';

/** MAIL FROM and RCPT TO, exactly as the relay gets them (`from: ''` is the null sender `<>`). */
export interface SubmissionEnvelope {
  from: string;
  to: string[];
}

/** A message for nodemailer to compose (MIME, encodings and line lengths are its business). */
export interface ComposedMessage {
  /** `"Name <addr>"` or `addr`. */
  from: string;
  to: string[];
  cc: string[];
  /** Never written into the headers: the envelope carries them. */
  bcc: string[];
  replyTo?: string;
  subject: string;
  text?: string;
  html?: string;
  /** Extra headers (names and values already checked by the caller). */
  headers?: Record<string, string>;
  /** With `contentId` (without angle brackets) an attachment is inline, for `cid:` in the HTML. */
  attachments?: Array<{ filename: string; content: Buffer; contentType?: string; contentId?: string }>;
  /** `<uuid@domain>`: the Message-ID header as given. */
  messageId: string;
  date?: Date;
}

/** Either a message to compose or a complete RFC 5322 message (sent byte for byte), never both. */
export type SubmissionMessage =
  | { envelope: SubmissionEnvelope; compose: ComposedMessage; raw?: undefined }
  | { envelope: SubmissionEnvelope; raw: Buffer; compose?: undefined };

/** SMTP AUTH: the company's relay username and a submission token as its password. */
export interface SubmissionAuth {
  user: string;
  pass: string;
}

/** One recipient the relay did not take, with its RCPT TO answer. */
export interface RecipientRefusal {
  email: string;
  code: number;
  response: string;
}

export interface SubmissionResult {
  /** The Postfix queue id from the final answer (`250 2.0.0 Ok: queued as 4XkW2T1zq9z6`), null if it names none. */
  queueId: string | null;
  /** The final answer to the message, as the relay gave it. */
  response: string;
  accepted: string[];
  /** Refused for good at RCPT TO (5xx). */
  rejected: RecipientRefusal[];
  /** Refused for now at RCPT TO (4xx): worth another try later. */
  deferred: RecipientRefusal[];
}

/** What both failures carry: the relay's answer when there was one, and each recipient's if all were refused. */
abstract class RelaySubmissionError extends Error {
  constructor(
    message: string,
    /** The SMTP reply code, null when the relay never answered (refused or lost connection, timeout, TLS). */
    readonly code: number | null,
    readonly response: string | null,
    /** Filled when every recipient was refused at RCPT TO; empty otherwise. */
    readonly recipients: { rejected: RecipientRefusal[]; deferred: RecipientRefusal[] },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Try again later: no connection, a timeout, TLS, a 4xx greeting, AUTH, MAIL FROM or DATA answer,
 * or every recipient refused with at least one 4xx among them (then `recipients` says who got a
 * 5xx: those are refused for good, only the others are worth another try).
 */
export class RelayUnavailableError extends RelaySubmissionError {
  override readonly name = 'RelayUnavailableError';
}

/**
 * Refused for good: AUTH (535; not 500–504, which say the relay is not set up for AUTH), MAIL
 * FROM, DATA or the end of the message answered 5xx, or every recipient did.
 */
export class RelayRefusedError extends RelaySubmissionError {
  override readonly name = 'RelayRefusedError';
  declare readonly code: number;
  declare readonly response: string;
}

export interface RelaySubmitterOptions {
  /** `smtp://host:port` (STARTTLS when offered, port 587 by default) or `smtps://host:port` (TLS from the start, 465). */
  url: string;
  /** Connecting (DNS, TCP, greeting, STARTTLS) may take this long, and so may the relay's silence on a connection. */
  timeoutMs?: number;
  /** Connections kept open per relay username. */
  maxConnectionsPerUser?: number;
  /** Relay usernames whose connections are kept; past that the least recently used one's are closed. */
  maxUsers?: number;
  /** A connection closes when idle this long. */
  idleMs?: number;
  /**
   * A user's connections keep the password they were opened with while it is younger than this;
   * a different password given later replaces them (a submission token is valid 10 minutes, and
   * a pool opens new connections with its own password).
   */
  passRefreshMs?: number;
  logger?: LoggerService;
}

const DEFAULTS = {
  timeoutMs: 30_000,
  maxConnectionsPerUser: 3,
  maxUsers: 100,
  idleMs: 5_000,
  passRefreshMs: 5 * 60_000,
};

/** Failures that never got (or lost) an answer from the relay. */
const CONNECTION_CODES = new Set([
  'ECONNECTION',
  'ESOCKET',
  'ETIMEDOUT',
  'EDNS',
  'ETLS',
  'EPROTOCOL',
  'EPROXY',
]);

/**
 * Answers to AUTH that say the relay does not do SMTP AUTH (Postfix: `503 5.5.1 Error:
 * authentication not enabled`; others: 500 not recognized, 502 not implemented, 504 mechanism
 * not supported).
 */
const AUTH_NOT_OFFERED = new Set([500, 502, 503, 504]);

/** A user's pooled transport and the password its connections log in with. */
interface UserPool {
  user: string;
  pass: string;
  /** When `pass` was given (Date.now()). */
  since: number;
  transport: Mail<SMTPPoolSentMessageInfo, SMTPPoolOptions>;
  /** Submissions still running on it: it closes once they are done. */
  inFlight: Set<Promise<unknown>>;
  closing?: Promise<void>;
}

/**
 * Hands messages to the relay (our Postfix) over SMTP, authenticated as the company's relay
 * username with a submission token, through nodemailer's pooled SMTP transport: one pool per
 * relay username, a few connections each, each logging in once when it opens (AUTH PLAIN) and
 * sending message after message (PIPELINING when offered) until idle for `idleMs`.
 *
 * `submit` resolves with the queue id and the recipients' answers when the relay queued the
 * message for at least one recipient; else it throws RelayUnavailableError (try later) or
 * RelayRefusedError (for good). Any other error (a message nodemailer cannot compose, an address
 * with CR or LF) is thrown as nodemailer gave it: the caller's mistake, not the relay's answer.
 */
export class RelaySubmitter {
  private readonly host: string;
  private readonly port: number;
  private readonly secure: boolean;
  private readonly settings: typeof DEFAULTS;
  private readonly logger: LoggerService;
  private readonly pools: LRUCache<string, UserPool>;
  private closed = false;

  constructor(options: RelaySubmitterOptions) {
    const url = new URL(options.url);
    if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
      throw new TypeError(`The relay URL must be smtp:// or smtps://, not ${url.protocol}//`);
    }
    this.secure = url.protocol === 'smtps:';
    this.host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    this.port = url.port ? Number(url.port) : this.secure ? 465 : 587;
    this.settings = {
      timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
      maxConnectionsPerUser: options.maxConnectionsPerUser ?? DEFAULTS.maxConnectionsPerUser,
      maxUsers: options.maxUsers ?? DEFAULTS.maxUsers,
      idleMs: options.idleMs ?? DEFAULTS.idleMs,
      passRefreshMs: options.passRefreshMs ?? DEFAULTS.passRefreshMs,
    };
    this.logger = options.logger ?? new Logger(RelaySubmitter.name);
    // Evicted (least recently used), replaced (new password) or cleared (close): closed once its
    // submissions are done.
    this.pools = new LRUCache<string, UserPool>({
      max: this.settings.maxUsers,
      dispose: (pool) => void this.retire(pool),
    });
  }

  async submit(auth: SubmissionAuth, message: SubmissionMessage): Promise<SubmissionResult> {
    // A pool whose login failed is dropped; if it logged in with an older password than the one
    // given now, the message is tried once more on a pool of its own with the new password.
    for (let attempt = 1; ; attempt++) {
      if (this.closed) {
        throw new RelayUnavailableError('The relay submitter is closed', null, null, {
          rejected: [],
          deferred: [],
        });
      }
      // Made anew for each try (nodemailer keeps what it is given), and before a pool is chosen.
      const options = mailOptions(message);
      const pool = this.poolFor(auth);
      try {
        return resultOf(await this.send(pool, options));
      } catch (err) {
        const authFailed = (err as NodemailerError | undefined)?.code === 'EAUTH';
        if (authFailed) this.forget(pool);
        if (!(authFailed && attempt === 1 && pool.pass !== auth.pass)) throw classify(err);
      }
    }
  }

  /** Closes every connection, once the submissions under way are done. */
  async close(): Promise<void> {
    this.closed = true;
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((pool) => this.retire(pool)));
  }

  private poolFor(auth: SubmissionAuth): UserPool {
    const current = this.pools.get(auth.user);
    if (current && (current.pass === auth.pass || Date.now() - current.since < this.settings.passRefreshMs)) {
      return current;
    }
    const pool = this.openPool(auth);
    this.pools.set(auth.user, pool);
    return pool;
  }

  private openPool(auth: SubmissionAuth): UserPool {
    const transport = createTransport({
      pool: true,
      host: this.host,
      port: this.port,
      secure: this.secure,
      // STARTTLS when offered, not required; a self-signed certificate passes on loopback only.
      tls: isLoopback(this.host) ? { rejectUnauthorized: false } : undefined,
      // Log in even if AUTH is not offered: unauthenticated, Postfix would take mail from
      // loopback as its own network and nobody would be charged for it.
      forceAuth: true,
      auth: { user: auth.user, pass: auth.pass, method: 'PLAIN' },
      maxConnections: this.settings.maxConnectionsPerUser,
      maxMessages: 1000,
      idleTimeout: this.settings.idleMs,
      connectionTimeout: this.settings.timeoutMs,
      greetingTimeout: this.settings.timeoutMs,
      socketTimeout: this.settings.timeoutMs,
      // Content is given as bytes: nothing is read from files or URLs.
      disableFileAccess: true,
      disableUrlAccess: true,
      logger: false,
    });
    transport.on('error', (err: Error) => {
      this.logger.warn(`Relay pool of ${auth.user}: ${err.message}`, RelaySubmitter.name);
    });
    this.logger.debug?.(`Relay pool opened for ${auth.user}`, RelaySubmitter.name);
    return { user: auth.user, pass: auth.pass, since: Date.now(), transport, inFlight: new Set() };
  }

  private async send(pool: UserPool, options: SendMailOptions): Promise<SMTPPoolSentMessageInfo> {
    const sending = pool.transport.sendMail(options);
    pool.inFlight.add(sending);
    try {
      return await sending;
    } finally {
      pool.inFlight.delete(sending);
    }
  }

  /** Drops a pool from the map if it is still the user's (its closing follows through `dispose`). */
  private forget(pool: UserPool): void {
    if (this.pools.peek(pool.user) === pool) this.pools.delete(pool.user);
  }

  private retire(pool: UserPool): Promise<void> {
    pool.closing ??= Promise.allSettled([...pool.inFlight]).then(() => {
      pool.transport.close();
      this.logger.debug?.(`Relay pool closed for ${pool.user}`, RelaySubmitter.name);
    });
    return pool.closing;
  }
}

function mailOptions(message: SubmissionMessage): SendMailOptions {
  // The envelope is always given: bcc stays out of the headers, and nothing is derived from them.
  const envelope = { from: message.envelope.from, to: [...message.envelope.to] };
  if (message.raw && message.compose) throw new TypeError('A submission is either composed or raw, not both');
  if (message.raw) return { envelope, raw: message.raw };
  if (!message.compose) throw new TypeError('A submission needs a message to compose or a raw one');
  const m = message.compose;
  return {
    envelope,
    from: m.from,
    to: m.to,
    cc: m.cc,
    bcc: m.bcc,
    replyTo: m.replyTo,
    subject: m.subject,
    text: m.text,
    html: m.html,
    headers: m.headers ? { ...m.headers } : undefined,
    messageId: m.messageId,
    date: m.date,
    attachments: m.attachments?.map((a) => ({
      filename: a.filename,
      content: a.content,
      contentType: a.contentType,
      ...(a.contentId
        ? { cid: a.contentId.replace(/^<(.*)>$/, '$1'), contentDisposition: 'inline' as const }
        : { contentDisposition: 'attachment' as const }),
    })),
  };
}

function resultOf(info: SMTPPoolSentMessageInfo): SubmissionResult {
  return {
    queueId: queueIdOf(info.response),
    response: info.response,
    accepted: [...info.accepted],
    ...splitRefusals(info.rejectedErrors ?? []),
  };
}

/** Postfix's short (hex) and long (base 52 digits) queue ids alike. */
function queueIdOf(response: string): string | null {
  return /\bqueued as ([0-9A-Za-z]+)/i.exec(response)?.[1] ?? null;
}

/** 5xx (nodemailer's `permanent`: all but 503) refused for good, the rest (4xx) for now. */
function splitRefusals(errors: NodemailerError[]): {
  rejected: RecipientRefusal[];
  deferred: RecipientRefusal[];
} {
  const rejected: RecipientRefusal[] = [];
  const deferred: RecipientRefusal[] = [];
  for (const err of errors) {
    const refusal = {
      email: err.recipient ?? '',
      code: err.responseCode ?? 0,
      response: err.response ?? err.message,
    };
    (isPermanent(err) ? rejected : deferred).push(refusal);
  }
  return { rejected, deferred };
}

function isPermanent(err: NodemailerError): boolean {
  return err.permanent ?? (err.responseCode !== undefined && err.responseCode >= 500);
}

function classify(thrown: unknown): unknown {
  // Not `instanceof Error`: a socket's error comes from Node's own realm, which under Jest is not the test's.
  if (!types.isNativeError(thrown)) return thrown;
  const err = thrown as NodemailerError;
  const cause = { cause: err };
  if (err.code === 'EENVELOPE' && err.command === 'RCPT TO' && err.rejectedErrors?.length) {
    const recipients = splitRefusals(err.rejectedErrors);
    const first = recipients.deferred[0] ?? recipients.rejected[0];
    const Failure = recipients.deferred.length ? RelayUnavailableError : RelayRefusedError;
    return new Failure(
      `The relay refused every recipient: ${first.response}`,
      first.code,
      first.response,
      recipients,
      cause,
    );
  }
  const none = { rejected: [], deferred: [] };
  if (err.responseCode && err.response) {
    // AUTH answered "not recognized", "not implemented" or "not enabled" is the relay's setup,
    // not the token: worth trying again once it is fixed.
    const relaySetup = err.code === 'EAUTH' && AUTH_NOT_OFFERED.has(err.responseCode);
    const Failure = isPermanent(err) && !relaySetup ? RelayRefusedError : RelayUnavailableError;
    return new Failure(
      `The relay answered ${err.command ?? 'the connection'} with ${err.response}`,
      err.responseCode,
      err.response,
      none,
      cause,
    );
  }
  if ((err.code && CONNECTION_CODES.has(err.code)) || err.message === 'Connection pool was closed') {
    const why = err.originalCode ?? err.code ?? 'closed';
    return new RelayUnavailableError(
      `The relay is unreachable (${why}): ${err.message}`,
      null,
      null,
      none,
      cause,
    );
  }
  return err;
}

/** 127.0.0.0/8, ::1 and localhost: the only hosts whose certificate is not checked. */
function isLoopback(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}
