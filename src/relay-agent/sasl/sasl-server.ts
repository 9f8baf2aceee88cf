import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { Socket } from 'node:net';
import { PipelinedConnection } from '../../common/net/pipelined-connection';
import { TcpListener, TcpListenerOptions } from '../../common/net/tcp-listener';
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

export interface SaslServerOptions extends TcpListenerOptions {
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
    super(options);
    this.answerTimeoutMs = options.answerTimeoutMs ?? 2_000;
    this.maxPending = options.maxPending ?? 64;
  }

  protected accept(socket: Socket, stalled: () => void): SaslConnection {
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 60_000);
    const connection = new SaslConnection(
      socket,
      this.authenticate,
      this.logger,
      {
        answerTimeoutMs: this.answerTimeoutMs,
        maxPending: this.maxPending,
      },
      stalled,
    );
    socket.write(handshake(process.pid, ++this.connectionIds, randomBytes(16).toString('hex')));
    return connection;
  }
}

/** One Postfix connection: lines read and answered in order, at most maxPending waiting. */
class SaslConnection extends PipelinedConnection {
  private readonly reader = new LineReader();
  private readonly session = new SaslSession();

  constructor(
    socket: Socket,
    private readonly authenticate: Authenticate,
    private readonly logger: Logger,
    private readonly options: Required<Pick<SaslServerOptions, 'answerTimeoutMs' | 'maxPending'>>,
    stalled: () => void,
  ) {
    super(socket, options.maxPending, stalled);
  }

  protected received(chunk: Buffer): void {
    this.reader.push(chunk);
  }

  protected takeNext(): boolean {
    let step: SaslStep;
    try {
      const line = this.reader.next();
      if (line === null) return false;
      step = this.session.handle(line);
    } catch (e: unknown) {
      if (!(e instanceof SaslProtocolError)) throw e;
      this.logger.warn(`SASL protocol error (${e.message}): closing the connection`);
      this.socket.destroy();
      return false;
    }
    if (step === null) return true;
    if ('refused' in step && step.refused) {
      const { reason, username, mechanism, clientAddress } = step.refused;
      this.logger.warn(
        { user: username?.slice(0, 64), rip: clientAddress, mech: mechanism, reason },
        'SMTP AUTH failed',
      );
    }
    if ('reply' in step && this.pending === 0) this.write(step.reply);
    else this.answerInTurn(step);
    return true;
  }

  private answerInTurn(step: NonNullable<SaslStep>): void {
    this.enqueue(
      async () => {
        if ('reply' in step) return this.write(step.reply);
        const { id, ...attempt } = step.check;
        const username = await this.decide(attempt);
        if (username !== undefined && !this.socket.destroyed) {
          this.write(username === null ? failLine(id) : okLine(id, username));
        }
      },
      (e: unknown) => this.logger.error({ err: e }, 'SMTP AUTH answer failed: closing the connection'),
    );
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
}
