import { Logger } from '@nestjs/common';
import { Socket } from 'node:net';
import { PipelinedConnection } from '../../common/net/pipelined-connection';
import { TcpListener, TcpListenerOptions } from '../../common/net/tcp-listener';
import type { RelayDecision, RelayQuery } from '../../modules/internal/relay-decision';
import {
  formatReply,
  PolicyAttributes,
  PolicyProtocolError,
  PolicyRequestParser,
  policyAction,
  toRelayQuery,
} from './policy-protocol';

export type Decide = (
  query: RelayQuery,
) => Promise<Pick<RelayDecision, 'action'> & Partial<Pick<RelayDecision, 'rejectedRecipients'>>>;

export interface PolicyServerOptions extends TcpListenerOptions {
  /** Requests read but not answered, past which the connection is not read until they are. */
  maxPending?: number;
}

/** Close a connection that sends nothing for this long (Postfix keeps idle ones ~300 s itself). */
const IDLE_TIMEOUT_MS = 330_000;

/**
 * Postfix's policy delegation protocol over TCP: up to maxConnections (1,000) connections, each
 * carrying requests one after another; every request gets `action=…`, in order. A request the service
 * cannot judge gets `DUNNO`; an empty request, an oversized one or an internal error closes the
 * connection, so Postfix applies its own default. A connection whose client does not read its
 * replies is not read either (at most maxPending requests wait), so it cannot stall the others.
 */
export class PolicyServer extends TcpListener<PolicyConnection> {
  private readonly logger = new Logger(PolicyServer.name);
  private readonly maxPending: number;

  constructor(
    private readonly decide: Decide,
    options: PolicyServerOptions = {},
  ) {
    super(options);
    this.maxPending = options.maxPending ?? 64;
  }

  protected accept(socket: Socket, stalled: () => void): PolicyConnection {
    socket.setTimeout(IDLE_TIMEOUT_MS, () => socket.destroy());
    return new PolicyConnection(socket, this.decide, this.logger, this.maxPending, stalled);
  }
}

/** One Postfix connection: requests decided one after the other, at most maxPending waiting. */
class PolicyConnection extends PipelinedConnection {
  private readonly parser = new PolicyRequestParser();

  constructor(
    socket: Socket,
    private readonly decide: Decide,
    private readonly logger: Logger,
    maxPending: number,
    stalled: () => void,
  ) {
    super(socket, maxPending, stalled);
  }

  protected received(chunk: Buffer): void {
    this.parser.push(chunk);
  }

  protected takeNext(): boolean {
    let attributes: PolicyAttributes | null;
    try {
      attributes = this.parser.next();
    } catch (e: unknown) {
      if (!(e instanceof PolicyProtocolError)) throw e;
      this.logger.warn(`${e.message}: closing the connection`);
      this.socket.destroy();
      return false;
    }
    if (attributes === null) return false;
    const query = toRelayQuery(attributes);
    this.enqueue(
      async () => {
        const action = query ? policyAction(await this.decide(query)) : 'DUNNO';
        this.write(formatReply(action));
      },
      (e: unknown) => this.logger.error({ err: e }, 'Relay decision failed: closing the connection'),
    );
    return true;
  }
}
