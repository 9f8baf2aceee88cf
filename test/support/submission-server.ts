import { randomInt } from 'node:crypto';
import { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** An SMTP answer: a reply code and its text (the enhanced status code is part of the text). */
export interface Answer {
  code: number;
  text: string;
}

export interface SubmittedMessage {
  /** Which connection (smtp-server's session id) carried it. */
  sessionId: string;
  /** The SMTP AUTH username of that connection. */
  user: string | null;
  /** STARTTLS or implicit TLS. */
  secure: boolean;
  mailFrom: string;
  rcptTo: string[];
  /** The message as it arrived, after dot-unstuffing. */
  raw: Buffer;
  /** The queue id named in the 250 answer. */
  queueId: string;
}

export interface SubmissionServerOptions {
  /** TLS from the start (smtps); else STARTTLS is offered. Both with smtp-server's own self-signed certificate. */
  secure?: boolean;
  /** Answer each connection with this instead of the 220 greeting, then close it. */
  greeting?: Answer;
  /** Offer no AUTH (a relay that is not set up for SMTP AUTH). */
  withoutAuth?: boolean;
}

/** Letters of Postfix's long queue ids (`enable_long_queue_ids`): digits and consonants. */
const QUEUE_ID_LETTERS = '0123456789BCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz';

/**
 * A submission port on loopback, played like Postfix's: AUTH PLAIN or LOGIN required before MAIL
 * FROM, each message answered `250 2.0.0 Ok: queued as <queue id>`. It keeps every login and
 * message, counts connections opened and closed, and answers as a test tells it: a login with
 * `refuseLogin`, MAIL FROM with `mailFromAnswer`, a recipient with `recipientAnswers`, the end of
 * a message with `dataAnswer` (once `holdData`, if set, is settled).
 */
export class SubmissionServer {
  readonly logins: Array<{ sessionId: string; method: string; user: string; pass: string }> = [];
  readonly messages: SubmittedMessage[] = [];
  /** Connections opened and closed, by smtp-server's session id. */
  readonly opened: string[] = [];
  readonly closed: string[] = [];
  /** The answer to a login, if not 235 (535 for a wrong password). */
  refuseLogin?: (user: string, pass: string) => Answer | undefined;
  /** Refuses RCPT TO of an address (lower case) with this answer. */
  readonly recipientAnswers = new Map<string, Answer>();
  /** Refuses MAIL FROM with this answer. */
  mailFromAnswer?: Answer;
  /** Refuses each message, once received, with this answer. */
  dataAnswer?: Answer;
  /** While set, each message, once received, waits for it before it is answered. */
  holdData?: Promise<void>;
  /** Messages received and not answered yet, and the most there were at once. */
  inData = 0;
  mostInData = 0;
  port = 0;
  private server?: SMTPServer;

  constructor(private readonly options: SubmissionServerOptions = {}) {}

  async start(): Promise<this> {
    this.server = new SMTPServer({
      secure: this.options.secure ?? false,
      authMethods: ['PLAIN', 'LOGIN'],
      disabledCommands: this.options.withoutAuth ? ['AUTH'] : [],
      allowInsecureAuth: true,
      logger: false,
      size: 64 * 1024 * 1024,
      onConnect: (session, callback) => {
        this.opened.push(session.id);
        const greeting = this.options.greeting;
        if (!greeting) return callback();
        callback(Object.assign(new Error(greeting.text), { responseCode: greeting.code }));
      },
      onClose: (session) => {
        this.closed.push(session.id);
      },
      onAuth: (auth, session, callback) => {
        this.logins.push({
          sessionId: session.id,
          method: auth.method,
          user: auth.username ?? '',
          pass: auth.password ?? '',
        });
        const refusal = this.refuseLogin?.(auth.username ?? '', auth.password ?? '');
        if (refusal) return callback(Object.assign(new Error(refusal.text), { responseCode: refusal.code }));
        callback(null, { user: auth.username });
      },
      onMailFrom: (_address, session, callback) => {
        if (!session.user) {
          return callback(Object.assign(new Error('5.7.0 Authentication required'), { responseCode: 530 }));
        }
        const answer = this.mailFromAnswer;
        if (!answer) return callback();
        callback(Object.assign(new Error(answer.text), { responseCode: answer.code }));
      },
      onRcptTo: (address, _session, callback) => {
        const answer = this.recipientAnswers.get(address.address.toLowerCase());
        if (!answer) return callback();
        callback(Object.assign(new Error(answer.text), { responseCode: answer.code }));
      },
      onData: (stream, session, callback) => {
        readAll(stream)
          .then(async (raw) => {
            this.inData++;
            this.mostInData = Math.max(this.mostInData, this.inData);
            await this.holdData;
            this.inData--;
            const answer = this.dataAnswer;
            if (answer) return callback(Object.assign(new Error(answer.text), { responseCode: answer.code }));
            const queueId = newQueueId();
            const envelope = session.envelope;
            this.messages.push({
              sessionId: session.id,
              user: typeof session.user === 'string' ? session.user : null,
              secure: session.secure,
              mailFrom: envelope.mailFrom ? envelope.mailFrom.address : '',
              rcptTo: envelope.rcptTo.map((r) => r.address),
              raw,
              queueId,
            });
            callback(null, `2.0.0 Ok: queued as ${queueId}`);
          })
          .catch((e: Error) => callback(e));
      },
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.server.address() as AddressInfo).port;
    return this;
  }

  get url(): string {
    return `${this.options.secure ? 'smtps' : 'smtp'}://127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

function newQueueId(): string {
  let id = '4Xk';
  for (let i = 0; i < 9; i++) id += QUEUE_ID_LETTERS[randomInt(QUEUE_ID_LETTERS.length)];
  return id;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
