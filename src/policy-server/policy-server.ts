import { Logger } from '@nestjs/common';
import { Socket } from 'node:net';
import { TcpListener } from '../common/net/tcp-listener';
import type { RelayDecision, RelayQuery } from '../modules/internal/relay-decision';
import {
  formatReply,
  PolicyProtocolError,
  PolicyRequestParser,
  policyAction,
  toRelayQuery,
} from './policy-protocol';

export type Decide = (
  query: RelayQuery,
) => Promise<Pick<RelayDecision, 'action'> & Partial<Pick<RelayDecision, 'rejectedRecipients'>>>;

/** Close a connection that sends nothing for this long (Postfix keeps idle ones ~300 s itself). */
const IDLE_TIMEOUT_MS = 330_000;

/**
 * Postfix's policy delegation protocol over TCP: any number of connections, each carrying
 * requests one after another; every request gets `action=…`. A request the service cannot judge
 * gets `DUNNO`; an internal error closes the connection, so Postfix applies its own default.
 */
export class PolicyServer extends TcpListener<Socket> {
  private readonly logger = new Logger(PolicyServer.name);

  constructor(private readonly decide: Decide) {
    super();
  }

  protected accept(socket: Socket): Socket {
    socket.setEncoding('utf8');
    socket.setTimeout(IDLE_TIMEOUT_MS, () => socket.destroy());
    socket.on('error', () => socket.destroy());
    const parser = new PolicyRequestParser();
    // Requests on one connection are answered in order: each waits for the one before.
    let answered = Promise.resolve();
    socket.on('data', (chunk: string) => {
      let requests;
      try {
        requests = parser.push(chunk);
      } catch (e: unknown) {
        if (!(e instanceof PolicyProtocolError)) throw e;
        this.logger.warn(`${e.message}: closing the connection`);
        socket.destroy();
        return;
      }
      for (const attributes of requests) {
        answered = answered.then(async () => {
          if (socket.destroyed) return;
          const query = toRelayQuery(attributes);
          try {
            const action = query ? policyAction(await this.decide(query)) : 'DUNNO';
            socket.write(formatReply(action));
          } catch (e: unknown) {
            this.logger.error({ err: e }, 'Relay decision failed: closing the connection');
            socket.destroy();
          }
        });
      }
    });
    return socket;
  }
}
