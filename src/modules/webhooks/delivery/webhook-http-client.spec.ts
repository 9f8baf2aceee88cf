import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { WebhookHttpClient, type WebhookHttpClientOptions } from './webhook-http-client';
import { newWebhookSecret, signedHeaders } from './webhook-signing';
import type { WebhookLookup } from './webhook-target';

interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

type Answer = (response: ServerResponse, request: IncomingMessage) => void;

/** A loopback HTTP server that records what it receives and answers as told. */
interface Receiver {
  port: number;
  url: string;
  requests: ReceivedRequest[];
  connections: Socket[];
  close(): Promise<void>;
}

const receivers: Receiver[] = [];
const clients: WebhookHttpClient[] = [];

async function startReceiver(answer: Answer = (response) => response.end('ok')): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const connections: Socket[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: request.method!, path: request.url!, headers: request.headers, body });
      answer(response, request);
    });
  });
  // Idle connections stay open for a minute: within a test, only the client ends one.
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket: Socket) => connections.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const receiver: Receiver = {
    port,
    url: `http://127.0.0.1:${port}`,
    requests,
    connections,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  receivers.push(receiver);
  return receiver;
}

function newClient(options: Partial<WebhookHttpClientOptions> = {}): WebhookHttpClient {
  const client = new WebhookHttpClient({ allowHttp: true, allowPrivateTargets: true, ...options });
  clients.push(client);
  return client;
}

/** A port nothing listens on: one the system gave a server that is closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

const event = JSON.stringify({ id: 'evt_1', type: 'message.delivered', data: { messageId: 'msg_1' } });

describe('WebhookHttpClient', () => {
  it('POSTs the signed event, and the receiver verifies it with standardwebhooks', async () => {
    const receiver = await startReceiver((response) => response.writeHead(204).end());
    const secret = newWebhookSecret();

    const result = await newClient().send(
      `${receiver.url}/hooks?source=relay`,
      signedHeaders('evt_1', event, [secret], new Date()),
      event,
    );

    expect(result).toEqual({
      at: expect.any(Date) as Date,
      ms: expect.any(Number) as number,
      status: 204,
      body: '',
      outcome: 'delivered',
    });
    const [request] = receiver.requests;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/hooks?source=relay');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toBe('EmailRelay-Webhooks/1');
    expect(request.headers['webhook-id']).toBe('evt_1');
    expect(new Webhook(secret).verify(request.body, request.headers as Record<string, string>)).toEqual(
      JSON.parse(event),
    );
  });

  it('sends both signatures after a secret rotation, and each secret verifies alone', async () => {
    const receiver = await startReceiver();
    const [newSecret, oldSecret] = [newWebhookSecret(), newWebhookSecret()];

    await newClient().send(
      receiver.url,
      signedHeaders('evt_1', event, [newSecret, oldSecret], new Date()),
      event,
    );

    const { body, headers } = receiver.requests[0];
    expect((headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    expect(new Webhook(newSecret).verify(body, headers as Record<string, string>)).toEqual(JSON.parse(event));
    expect(new Webhook(oldSecret).verify(body, headers as Record<string, string>)).toEqual(JSON.parse(event));
  });

  it('sends the same webhook-id on every attempt of an event', async () => {
    const receiver = await startReceiver((response) => response.writeHead(500).end());
    const secret = newWebhookSecret();
    const client = newClient();

    await client.send(
      receiver.url,
      signedHeaders('evt_7', event, [secret], new Date(Date.now() - 5000)),
      event,
    );
    await client.send(receiver.url, signedHeaders('evt_7', event, [secret], new Date()), event);

    const [first, retry] = receiver.requests;
    expect(first.headers['webhook-id']).toBe('evt_7');
    expect(retry.headers['webhook-id']).toBe('evt_7');
    expect(first.headers['webhook-timestamp']).not.toBe(retry.headers['webhook-timestamp']);
  });

  it('counts a 200 as delivered and keeps its answer', async () => {
    const receiver = await startReceiver((response) => response.end('{"received":true}'));
    const result = await newClient().send(receiver.url, {}, event);
    expect(result).toMatchObject({ status: 200, outcome: 'delivered', body: '{"received":true}' });
    expect(result.error).toBeUndefined();
    expect(result.ms).toBeGreaterThanOrEqual(0);
  });

  it('counts a 500 as failed, with its status and answer', async () => {
    const receiver = await startReceiver((response) => response.writeHead(500).end('database down'));
    const result = await newClient().send(receiver.url, {}, event);
    expect(result).toMatchObject({ status: 500, outcome: 'failed', body: 'database down' });
    expect(result.retryAfterMs).toBeUndefined();
  });

  it('does not follow a redirect: a 302 is a failure and its target receives nothing', async () => {
    const target = await startReceiver();
    const receiver = await startReceiver((response) =>
      response.writeHead(302, { location: `${target.url}/moved` }).end(),
    );

    const result = await newClient().send(receiver.url, {}, event);

    expect(result).toMatchObject({ status: 302, outcome: 'failed' });
    expect(receiver.requests).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
    expect(target.connections).toHaveLength(0);
  });

  it('reports a 410 as gone', async () => {
    const receiver = await startReceiver((response) => response.writeHead(410).end());
    const result = await newClient().send(receiver.url, {}, event);
    expect(result).toMatchObject({ status: 410, outcome: 'gone' });
  });

  it('reads Retry-After in seconds from a 429', async () => {
    const receiver = await startReceiver((response) =>
      response.writeHead(429, { 'retry-after': '120' }).end(),
    );
    const result = await newClient().send(receiver.url, {}, event);
    expect(result).toMatchObject({ status: 429, outcome: 'failed', retryAfterMs: 120_000 });
  });

  it('reads Retry-After as an HTTP date from a 503', async () => {
    const until = new Date(Date.now() + 90_000);
    const receiver = await startReceiver((response) =>
      response.writeHead(503, { 'retry-after': until.toUTCString() }).end(),
    );
    const result = await newClient().send(receiver.url, {}, event);
    expect(result).toMatchObject({ status: 503, outcome: 'failed' });
    // The date has whole seconds; the answer came some time after `until` was taken.
    expect(result.retryAfterMs).toBeGreaterThan(60_000);
    expect(result.retryAfterMs).toBeLessThanOrEqual(90_000);
  });

  it('caps Retry-After at 1 hour and ignores it on other statuses', async () => {
    const limited = await startReceiver((response) =>
      response.writeHead(429, { 'retry-after': '86400' }).end(),
    );
    const failing = await startReceiver((response) =>
      response.writeHead(500, { 'retry-after': '120' }).end(),
    );
    const client = newClient();
    expect((await client.send(limited.url, {}, event)).retryAfterMs).toBe(3_600_000);
    expect((await client.send(failing.url, {}, event)).retryAfterMs).toBeUndefined();
  });

  it('keeps the first 1 KB of a 2 MB answer and stops reading it', async () => {
    let socketClosed!: Promise<void>;
    const receiver = await startReceiver((response) => {
      const socket = response.socket!;
      socketClosed = new Promise((resolve) => socket.once('close', () => resolve()));
      response.writeHead(200, { 'content-type': 'text/plain' }).end(Buffer.alloc(2 * 1024 * 1024, 'x'));
    });

    const result = await newClient().send(receiver.url, {}, event);

    expect(result).toMatchObject({ status: 200, outcome: 'delivered' });
    expect(result.body).toBe('x'.repeat(1024));
    // A client that read the whole answer would keep the connection in its pool (the receiver keeps
    // connections for a minute): only one that stopped reading closes it now.
    await socketClosed;
  });

  it('gives up on a receiver that never answers after the configured time', async () => {
    let requested!: () => void;
    const requestArrived = new Promise<void>((resolve) => (requested = resolve));
    const receiver = await startReceiver(() => requested());

    const result = await newClient({ timeoutMs: 300 }).send(receiver.url, {}, event);

    await requestArrived;
    expect(result).toMatchObject({ error: 'timeout after 300 ms', outcome: 'failed', body: '' });
    expect(result.status).toBeUndefined();
    expect(result.ms).toBeGreaterThanOrEqual(250);
  });

  it('reports a refused connection', async () => {
    const port = await closedPort();
    const result = await newClient().send(`http://127.0.0.1:${port}/`, {}, event);
    expect(result).toMatchObject({ error: 'ECONNREFUSED', outcome: 'failed', body: '' });
    expect(result.status).toBeUndefined();
  });

  it('reuses keep-alive connections: 20 attempts in a row open at most 2', async () => {
    const receiver = await startReceiver();
    const client = newClient();
    for (let attempt = 0; attempt < 20; attempt++) {
      expect((await client.send(receiver.url, {}, event)).outcome).toBe('delivered');
    }
    expect(receiver.requests).toHaveLength(20);
    expect(receiver.connections.length).toBeLessThanOrEqual(2);
  });

  it('connects to the address its lookup resolved and checked, keeping the host name', async () => {
    const receiver = await startReceiver();
    const lookup = jest.fn<ReturnType<WebhookLookup>, Parameters<WebhookLookup>>(() =>
      Promise.resolve([{ address: '127.0.0.1', family: 4 }]),
    );

    const result = await newClient({ lookup }).send(
      `http://hooks.customer.test:${receiver.port}/`,
      {},
      event,
    );

    expect(result.outcome).toBe('delivered');
    expect(lookup).toHaveBeenCalledWith('hooks.customer.test');
    expect(receiver.requests[0].headers.host).toBe(`hooks.customer.test:${receiver.port}`);
  });

  it('works with loopback receivers when private targets are allowed', async () => {
    const receiver = await startReceiver();
    const client = newClient({ allowPrivateTargets: true });
    expect((await client.send(receiver.url, {}, event)).outcome).toBe('delivered');
    expect((await client.send(`http://localhost:${receiver.port}/`, {}, event)).outcome).toBe('delivered');
  });

  describe('without private targets', () => {
    const resolvesToLoopback: WebhookLookup = () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]);

    it.each<[string, (port: number) => string, string]>([
      ['127.0.0.1', (port) => `http://127.0.0.1:${port}/`, 'address 127.0.0.1 is not public'],
      ['10.0.0.1', (port) => `http://10.0.0.1:${port}/`, 'address 10.0.0.1 is not public'],
      [
        'the metadata address',
        () => 'http://169.254.169.254/latest/meta-data/',
        'address 169.254.169.254 is not public',
      ],
      ['[::1]', (port) => `http://[::1]:${port}/`, 'address ::1 is not public'],
      [
        '[::ffff:127.0.0.1]',
        (port) => `http://[::ffff:127.0.0.1]:${port}/`,
        'address ::ffff:7f00:1 is not public',
      ],
      [
        'a name resolving to 127.0.0.1',
        (port) => `http://hooks.customer.test:${port}/`,
        'address 127.0.0.1 is not public',
      ],
    ])('refuses %s before connecting', async (_name, url, error) => {
      const receiver = await startReceiver();
      const client = newClient({ allowPrivateTargets: false, lookup: resolvesToLoopback });

      const result = await client.send(url(receiver.port), {}, event);

      expect(result).toMatchObject({ error, outcome: 'failed', body: '' });
      expect(result.status).toBeUndefined();
      expect(receiver.requests).toHaveLength(0);
      expect(receiver.connections).toHaveLength(0);
    });

    it('refuses localhost through the system resolver', async () => {
      const receiver = await startReceiver();
      const result = await newClient({ allowPrivateTargets: false }).send(
        `http://localhost:${receiver.port}/`,
        {},
        event,
      );
      expect(result.error).toMatch(/^address (127\.0\.0\.1|::1) is not public$/);
      expect(receiver.connections).toHaveLength(0);
    });
  });

  it('refuses an http URL unless http is allowed', async () => {
    const receiver = await startReceiver();
    const result = await newClient({ allowHttp: false }).send(receiver.url, {}, event);
    expect(result).toMatchObject({ error: 'Webhook URL must use https', outcome: 'failed' });
    expect(receiver.connections).toHaveLength(0);
  });
});
