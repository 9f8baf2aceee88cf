import { AddressInfo, createServer, Socket } from 'node:net';

/**
 * A TCP server of the relay agent (policy, SMTP AUTH, milter): listening, and closing with the
 * connections it holds. Each subclass makes a connection of a socket; `close()` asks every open
 * one to end once it has answered what it has read.
 */
export abstract class TcpListener<Connection extends { end(): void }> {
  private readonly open = new Set<Connection>();
  private readonly server = createServer((socket) => {
    const connection = this.accept(socket);
    this.open.add(connection);
    socket.on('close', () => this.open.delete(connection));
  });

  protected abstract accept(socket: Socket): Connection;

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
}
