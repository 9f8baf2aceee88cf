import { createServer, IncomingHttpHeaders, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

/** One request the receiver got. */
export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The parsed body. */
  json: { type: string; timestamp: string; data: Record<string, unknown> };
}

/** How the receiver answers a request: a status (200 by default), or hold it until released. */
export type Answer = { status?: number; headers?: Record<string, string>; body?: string } | 'hold';

/**
 * A customer's webhook receiver on loopback: records every request and answers as the test says
 * (`answer`), so tests wait for the requests they expect (`waitFor`), never for time.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  answer: (request: ReceivedWebhook) => Answer = () => ({ status: 200 });
  private readonly held: ServerResponse[] = [];
  private readonly waiters: Array<{ test: () => boolean; resolve: () => void }> = [];
  private server?: Server;
  private port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: ReceivedWebhook['json'];
        try {
          json = JSON.parse(body) as ReceivedWebhook['json'];
        } catch {
          json = { type: '', timestamp: '', data: {} };
        }
        const request = { path: req.url ?? '', headers: req.headers, body, json };
        this.received.push(request);
        const answer = this.answer(request);
        if (answer === 'hold') this.held.push(res);
        else res.writeHead(answer.status ?? 200, answer.headers).end(answer.body ?? 'ok');
        this.check();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** The requests to one path. */
  to(path: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.path === path);
  }

  /** Resolves once `test` holds (checked now and after every request). */
  waitFor(test: () => boolean): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ test, resolve }));
  }

  /** Answers the held requests with 200. */
  release(): void {
    for (const res of this.held.splice(0)) res.writeHead(200).end('ok');
  }

  async close(): Promise<void> {
    this.release();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private check(): void {
    for (const waiter of [...this.waiters]) {
      if (waiter.test()) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  }
}
