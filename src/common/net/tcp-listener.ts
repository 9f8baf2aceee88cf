import { Logger } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import { AddressInfo, createServer, Socket } from 'node:net';

export interface TcpListenerOptions {
  /**
   * Connections open at once, past which a new one is closed as soon as it is accepted, before
   * anything is read from it or allocated for it (quality.md: at most 1,000 a port). Postfix
   * needs one per smtpd process (default_process_limit 100).
   */
  maxConnections?: number;
}

export const DEFAULT_MAX_CONNECTIONS = 1000;

/** Connections refused past the limit are logged at most this often (a flood logs one line a minute). */
const REFUSED_LOG_INTERVAL_MS = 60_000;

/**
 * A TCP server of the relay agent (policy, SMTP AUTH, milter): listening, and closing with the
 * connections it holds. Each subclass makes a connection of a socket; `close()` asks every open
 * one to end once it has answered what it has read. At most `maxConnections` are open at once.
 *
 * Emits `stalled` when a connection stops reading because its client does not read its replies
 * and nothing it took is still being answered: the back-pressure specs wait for it.
 */
export abstract class TcpListener<Connection extends { end(): void }> extends EventEmitter<{ stalled: [] }> {
  readonly maxConnections: number;
  private readonly open = new Set<Connection>();
  private readonly server = createServer((socket) => {
    const connection = this.accept(socket, () => this.emit('stalled'));
    this.open.add(connection);
    socket.on('close', () => this.open.delete(connection));
  });
  private readonly limitLogger = new Logger('TcpListener');
  private refused = 0;
  private refusedLoggedAt = -Infinity;

  constructor(options: TcpListenerOptions = {}) {
    super();
    this.maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
    if (!Number.isSafeInteger(this.maxConnections) || this.maxConnections < 1) {
      throw new RangeError(`maxConnections must be a positive integer, not ${this.maxConnections}`);
    }
    // Node closes the handle of a connection past the limit itself, before any Socket exists.
    this.server.maxConnections = this.maxConnections;
    this.server.on('drop', () => this.dropped());
  }

  /** Makes the connection of a socket; it calls `stalled` when it waits for its client to read. */
  protected abstract accept(socket: Socket, stalled: () => void): Connection;

  /** Connections open now. */
  get connections(): number {
    return this.open.size;
  }

  /** Listens on `port` (0: any free one) of `host`; answers the port. */
  async listen(port: number, host = '127.0.0.1'): Promise<number> {
    await this.listening((done) => this.server.listen(port, host, done));
    return (this.server.address() as AddressInfo).port;
  }

  /**
   * Listens on a Unix socket at `path` instead. The back-pressure specs use one: on loopback TCP,
   * a peer that stops reading for long with megabytes queued both ways can leave the kernel's
   * receive buffers untuned, and the flow then crawls on retransmission timeouts, whatever the
   * server does. (No setting points the agent's listeners at a path yet.)
   */
  listenAt(path: string): Promise<void> {
    return this.listening((done) => this.server.listen(path, done));
  }

  /** Starts listening as `start` says; rejects on the server's error before it listens. */
  private listening(start: (done: () => void) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      start(() => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  /** Stops accepting; each connection closes once what it has read is answered. */
  close(): Promise<void> {
    for (const connection of this.open) connection.end();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private dropped(): void {
    this.refused += 1;
    const now = performance.now();
    if (now - this.refusedLoggedAt < REFUSED_LOG_INTERVAL_MS) return;
    this.limitLogger.warn(
      `${this.constructor.name}: ${this.refused} connection(s) closed at once: ${this.maxConnections} already open`,
    );
    this.refused = 0;
    this.refusedLoggedAt = now;
  }
}
