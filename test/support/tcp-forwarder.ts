import { AddressInfo, createConnection, createServer, Server, Socket } from 'node:net';

/**
 * A TCP port on loopback that passes each connection on to another port: a relay a test can take
 * down (`stop`: the port refuses connections and the open ones are cut) and bring back on the
 * same port (`start` again), while the server behind it keeps what it received.
 */
export class TcpForwarder {
  port = 0;
  private server?: Server;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly targetPort: () => number) {}

  /** Listens on the port it had before (the system's choice the first time). */
  async start(): Promise<this> {
    const server = createServer((client) => {
      const upstream = createConnection({ host: '127.0.0.1', port: this.targetPort() });
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** Closes the port and cuts every connection through it. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
