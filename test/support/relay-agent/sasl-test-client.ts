import { connect, Socket } from 'node:net';

/**
 * A SASL client speaking the bytes Postfix's `xsasl_dovecot_server.c` does, for the tests (unit
 * and e2e) and the bench: the handshake, then one request at a time, reading the answers line
 * by line.
 */
export class SaslTestClient {
  private buffer = '';
  private readonly lines: string[] = [];
  private waiting: { resolve: (line: string) => void; reject: (e: Error) => void } | undefined;
  private ended = false;
  private requestId = 0;
  /** Resolves when the server closes the connection. */
  readonly closed: Promise<void>;

  private constructor(readonly socket: Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      let end: number;
      while ((end = this.buffer.indexOf('\n')) !== -1) {
        this.lines.push(this.buffer.slice(0, end));
        this.buffer = this.buffer.slice(end + 1);
      }
      this.deliver();
    });
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    void this.closed.then(() => {
      this.ended = true;
      this.deliver();
    });
  }

  /**
   * Connects (to a port of `host`, or to a Unix socket's path) and sends Postfix's half of the
   * handshake (the server's is left to read).
   */
  static async connect(at: number | string, host = '127.0.0.1'): Promise<SaslTestClient> {
    const socket = typeof at === 'number' ? connect(at, host) : connect(at);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const client = new SaslTestClient(socket);
    client.send(`VERSION\t1\t0\nCPID\t${process.pid}\n`);
    return client;
  }

  /** The server's handshake lines, DONE included. */
  async handshake(): Promise<string[]> {
    const lines: string[] = [];
    for (let line = ''; line !== 'DONE';) lines.push((line = await this.line()));
    return lines;
  }

  send(text: string): void {
    this.socket.write(text);
  }

  /** The next line the server wrote; rejects if the server closes the connection first. */
  line(): Promise<string> {
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.deliver();
    });
  }

  /** AUTH PLAIN with the response as Postfix forwards it (`resp=` when the client gave one). */
  async plain(
    username: string,
    password: string,
    options: { rip?: string; authzid?: string; initial?: boolean } = {},
  ): Promise<string> {
    const id = ++this.requestId;
    const response = b64(`${options.authzid ?? ''}\0${username}\0${password}`);
    if (options.initial === false) {
      this.send(`${authLine(id, 'PLAIN', options.rip)}\n`);
      const cont = await this.line();
      if (cont !== `CONT\t${id}\t`) return cont;
      this.send(`CONT\t${id}\t${response}\n`);
    } else {
      this.send(`${authLine(id, 'PLAIN', options.rip)}\tresp=${response}\n`);
    }
    return this.line();
  }

  /** AUTH LOGIN: the username as initial response or after the first prompt, then the password. */
  async login(
    username: string,
    password: string,
    options: { rip?: string; initial?: boolean } = {},
  ): Promise<string> {
    const id = ++this.requestId;
    if (options.initial) {
      this.send(`${authLine(id, 'LOGIN', options.rip)}\tresp=${b64(username)}\n`);
    } else {
      this.send(`${authLine(id, 'LOGIN', options.rip)}\n`);
      const prompt = await this.line();
      if (prompt !== `CONT\t${id}\tVXNlcm5hbWU6`) return prompt;
      this.send(`CONT\t${id}\t${b64(username)}\n`);
    }
    const prompt = await this.line();
    if (prompt !== `CONT\t${id}\tUGFzc3dvcmQ6`) return prompt;
    this.send(`CONT\t${id}\t${b64(password)}\n`);
    return this.line();
  }

  /** The id the next request will carry. */
  get nextId(): number {
    return this.requestId + 1;
  }

  close(): void {
    this.socket.destroy();
  }

  private deliver(): void {
    if (!this.waiting) return;
    const line = this.lines.shift();
    const waiting = this.waiting;
    if (line !== undefined) {
      this.waiting = undefined;
      waiting.resolve(line);
    } else if (this.ended) {
      this.waiting = undefined;
      waiting.reject(new Error('connection closed by the server'));
    }
  }
}

export function b64(text: string): string {
  return Buffer.from(text).toString('base64');
}

/** An AUTH line as Postfix writes it, without `resp=` and the LF. */
export function authLine(id: number, mechanism: string, rip = '192.0.2.10'): string {
  return `AUTH\t${id}\t${mechanism}\tservice=smtp\tnologin\tlip=127.0.0.1\trip=${rip}`;
}
