import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { Socket } from 'node:net';
import { TcpListener } from '../../common/net/tcp-listener';
import {
  failLine,
  handshake,
  LineReader,
  okLine,
  SaslCredentials,
  SaslProtocolError,
  SaslSession,
  SaslStep,
} from './sasl-protocol';

/** The canonical username on success, null on failure; throws when it cannot decide. */
export type Authenticate = (attempt: Omit<SaslCredentials, 'id'>) => Promise<string | null>;

export interface SaslServerOptions {
  /** An answer not decided within this closes the connection (Postfix gives up after 10 s). */
  answerTimeoutMs?: number;
  /** Requests read but not answered, past which the connection is not read until they are. */
  maxPending?: number;
}

/**
 * SMTP AUTH for Postfix (`smtpd_sasl_type = dovecot`) over TCP. Each connection gets the
 * handshake, then requests one after the other, answered in order. Idle connections stay open
 * (Postfix keeps one per smtpd process for its life). When the check cannot decide (throws, or
 * takes longer than the answer timeout) the connection is closed: Postfix then answers 454
 * (temporary) rather than FAIL's permanent 535.
 */
export class SaslServer extends TcpListener<SaslConnection> {
  private readonly logger = new Logger(SaslServer.name);
  private readonly answerTimeoutMs: number;
  private readonly maxPending: number;
  private connectionIds = 0;

  constructor(
    private readonly authenticate: Authenticate,
    options: SaslServerOptions = {},
  ) {
    super();
    this.answerTimeoutMs = options.answerTimeoutMs ?? 2_000;
    this.maxPending = options.maxPending ?? 64;
  }

  protected accept(socket: Socket): SaslConnection {
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 60_000);
    const connection = new SaslConnection(socket, this.authenticate, this.logger, {
      answerTimeoutMs: this.answerTimeoutMs,
      maxPending: this.maxPending,
    });
    socket.write(handshake(process.pid, ++this.connectionIds, randomBytes(16).toString('hex')));
    return connection;
  }
}

class SaslConnection {
  private readonly reader = new LineReader();
  private readonly session = new SaslSession();
  /** Requests read and not yet answered; answers are written in the order requests came. */
  private pending = 0;
  private answered: Promise<void> = Promise.resolve();
  private waitingForDrain = false;
  private ending = false;

  constructor(
    private readonly socket: Socket,
    private readonly authenticate: Authenticate,
    private readonly logger: Logger,
    private readonly options: Required<SaslServerOptions>,
  ) {
    socket.on('data', (chunk: Buffer) => {
      this.reader.push(chunk);
      this.read();
    });
    socket.on('drain', () => {
      this.waitingForDrain = false;
      this.read();
    });
    socket.on('error', () => socket.destroy());
  }

  end(): void {
    this.ending = true;
    if (this.pending === 0) this.socket.end();
  }

  /**
   * Takes lines while fewer than maxPending requests wait and the client reads its answers;
   * otherwise the socket is paused, so a client that never reads cannot grow the agent's memory.
   */
  private read(): void {
    while (
      !this.socket.destroyed &&
      !this.ending &&
      this.pending < this.options.maxPending &&
      !this.waitingForDrain
    ) {
      let step: SaslStep;
      try {
        const line = this.reader.next();
        if (line === null) {
          this.socket.resume();
          return;
        }
        step = this.session.handle(line);
      } catch (e: unknown) {
        if (!(e instanceof SaslProtocolError)) throw e;
        this.logger.warn(`SASL protocol error (${e.message}): closing the connection`);
        this.socket.destroy();
        return;
      }
      if (step === null) continue;
      if ('refused' in step && step.refused) {
        const { reason, username, mechanism, clientAddress } = step.refused;
        this.logger.warn(
          { user: username?.slice(0, 64), rip: clientAddress, mech: mechanism, reason },
          'SMTP AUTH failed',
        );
      }
      if ('reply' in step && this.pending === 0) this.write(step.reply);
      else this.enqueue(step);
    }
    this.socket.pause();
  }

  private enqueue(step: NonNullable<SaslStep>): void {
    this.pending += 1;
    this.answered = this.answered
      .then(async () => {
        if (this.socket.destroyed) return;
        if ('reply' in step) return this.write(step.reply);
        const { id, ...attempt } = step.check;
        const username = await this.decide(attempt);
        if (username !== undefined && !this.socket.destroyed) {
          this.write(username === null ? failLine(id) : okLine(id, username));
        }
      })
      .catch((e: unknown) => {
        this.logger.error({ err: e }, 'SMTP AUTH answer failed: closing the connection');
        this.socket.destroy();
      })
      .finally(() => {
        this.pending -= 1;
        if (this.ending && this.pending === 0) this.socket.end();
        else this.read();
      });
  }

  /** The check's answer, or undefined once the connection was closed because it has none. */
  private async decide(attempt: Omit<SaslCredentials, 'id'>): Promise<string | null | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.options.answerTimeoutMs);
    });
    try {
      const answer = await Promise.race([this.authenticate(attempt), timeout]);
      if (answer !== 'timeout') return answer;
      this.logger.error(
        `SMTP AUTH check took over ${this.options.answerTimeoutMs} ms: closing the connection`,
      );
    } catch (e: unknown) {
      this.logger.error({ err: e }, 'SMTP AUTH check failed: closing the connection');
    } finally {
      clearTimeout(timer);
    }
    this.socket.destroy();
    return undefined;
  }

  private write(line: string): void {
    if (!this.socket.write(line)) this.waitingForDrain = true;
  }
}
