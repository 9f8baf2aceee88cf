import { randomBytes } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

export interface RecordedInvoiceRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  body: Record<string, unknown>;
}

export interface StoredGatewayInvoice {
  id: string;
  external_id: string;
  amount: number;
  currency: string;
  invoice_url: string;
  expiry_date: string;
}

/** How the server answers the next invoice requests. */
export type GatewayMode =
  { kind: 'ok' } | { kind: 'fail'; status: number; message: string } | { kind: 'hang' };

/**
 * A Xendit-compatible invoice API on loopback: `POST /v2/invoices` with HTTP Basic (secret key
 * as the user, empty password). Records every request, answers a PENDING invoice, and can be
 * told to fail (status + `{ error_code, message }`) or to hang (for the client's timeout).
 */
export class PaymentGatewayServer {
  readonly requests: RecordedInvoiceRequest[] = [];
  readonly invoices: StoredGatewayInvoice[] = [];
  mode: GatewayMode = { kind: 'ok' };
  private server?: Server;
  private readonly hanging = new Set<ServerResponse>();

  constructor(readonly secretKey: string) {}

  get url(): string {
    const address = this.server?.address() as AddressInfo | null;
    if (!address) throw new Error('Payment gateway server is not started');
    return `http://127.0.0.1:${address.port}`;
  }

  /** The requests that reached /v2/invoices with the right credentials. */
  get invoiceRequests(): RecordedInvoiceRequest[] {
    return this.requests.filter((r) => r.authorization === this.expectedAuthorization());
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      void this.handle(req, res);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    this.server = undefined;
  }

  reset(): void {
    this.requests.length = 0;
    this.mode = { kind: 'ok' };
  }

  private expectedAuthorization(): string {
    return `Basic ${Buffer.from(`${this.secretKey}:`).toString('base64')}`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    } catch {
      return this.send(res, 400, { error_code: 'API_VALIDATION_ERROR', message: 'Invalid JSON' });
    }
    const path = (req.url ?? '').split('?')[0];
    this.requests.push({ method: req.method ?? '', path, authorization: req.headers.authorization, body });

    if (req.method !== 'POST' || path !== '/v2/invoices') {
      return this.send(res, 404, { error_code: 'NOT_FOUND', message: 'Not found' });
    }
    if (req.headers.authorization !== this.expectedAuthorization()) {
      return this.send(res, 401, { error_code: 'INVALID_API_KEY', message: 'API key is incorrect' });
    }
    switch (this.mode.kind) {
      case 'hang':
        this.hanging.add(res);
        return;
      case 'fail':
        return this.send(res, this.mode.status, { error_code: 'SERVER_ERROR', message: this.mode.message });
      case 'ok':
        break;
    }
    const id = randomBytes(12).toString('hex');
    const duration = Number(body.invoice_duration ?? 86400);
    const invoice: StoredGatewayInvoice = {
      id,
      external_id: String(body.external_id),
      amount: Number(body.amount),
      currency: String(body.currency),
      invoice_url: `https://checkout.gateway.test/web/${id}`,
      expiry_date: new Date(Date.now() + duration * 1000).toISOString(),
    };
    this.invoices.push(invoice);
    this.send(res, 200, {
      ...invoice,
      status: 'PENDING',
      user_id: 'test-merchant',
      description: body.description,
    });
  }

  private send(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }
}
