import { simpleParser, ParsedMail } from 'mailparser';
import { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The message as it arrived (headers and body), for signature checks. */
  raw: Buffer;
}

/** A real SMTP server on loopback that keeps every message it receives. */
export class SmtpSink {
  readonly mails: ReceivedMail[] = [];
  private waiters: Array<() => void> = [];
  private server?: SMTPServer;
  port = 0;
  /** Recipients refused at RCPT with `550 5.1.1` (a mailbox that does not exist). */
  readonly refused = new Set<string>();

  async start(): Promise<this> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onRcptTo: (address, _session, callback) => {
        if (!this.refused.has(address.address.toLowerCase())) return callback();
        callback(Object.assign(new Error('5.1.1 No such user here'), { responseCode: 550 }));
      },
      // Room for the 25 MB message of the relay agent's test.
      size: 64 * 1024 * 1024,
      onData: (stream, session, callback) => {
        let raw: Buffer;
        readAll(stream)
          .then((bytes) => simpleParser((raw = bytes)))
          .then((parsed: ParsedMail) => {
            for (const rcpt of session.envelope.rcptTo) {
              this.mails.push({
                to: rcpt.address.toLowerCase(),
                subject: parsed.subject ?? '',
                text: parsed.text ?? '',
                html: typeof parsed.html === 'string' ? parsed.html : '',
                raw,
              });
            }
            this.waiters.splice(0).forEach((w) => w());
            callback();
          })
          .catch((e: Error) => callback(e));
      },
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.server.address() as AddressInfo).port;
    return this;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** Waits for the n-th mail to `to` whose subject matches: checked as each mail arrives, failing after 5 s. */
  async waitFor(to: string, subject: RegExp, nth = 1): Promise<ReceivedMail> {
    const find = () =>
      this.mails.filter((m) => m.to === to.toLowerCase() && subject.test(m.subject))[nth - 1];
    let timer: NodeJS.Timeout | undefined;
    // The timer only turns a mail that never comes into a clear failure instead of Jest's test timeout.
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`No mail #${nth} to ${to} matching ${subject}`)), 5000);
    });
    try {
      for (let found = find(); ; found = find()) {
        if (found) return found;
        await Promise.race([new Promise<void>((resolve) => this.waiters.push(resolve)), deadline]);
      }
    } finally {
      clearTimeout(timer);
    }
  }

  count(to: string, subject?: RegExp): number {
    return this.mails.filter((m) => m.to === to.toLowerCase() && (!subject || subject.test(m.subject)))
      .length;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** The token of the link `{APP_URL}{path}?token=…` in a mail's text. */
export function tokenFromLink(mail: ReceivedMail, path: string): string {
  const match = new RegExp(`${path.replace(/[/]/g, '\\/')}\\?token=([^\\s"<>]+)`).exec(mail.text);
  if (!match) throw new Error(`No ${path} link in mail "${mail.subject}"`);
  return decodeURIComponent(match[1]);
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
