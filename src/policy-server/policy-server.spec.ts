import { connect, Socket } from 'node:net';
import type { RelayQuery } from '../modules/internal/relay-decision';
import { PolicyServer } from './policy-server';

const request = (fields: Record<string, string>) =>
  `${Object.entries({ request: 'smtpd_access_policy', protocol_state: 'RCPT', ...fields })
    .map(([k, v]) => `${k}=${v}`)
    .join('\n')}\n\n`;

/** A client connection that collects complete replies. */
async function client(port: number) {
  const socket: Socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  let buffer = '';
  const replies: string[] = [];
  let closed = false;
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      replies.push(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
    }
  });
  socket.on('close', () => (closed = true));
  const until = async (done: () => boolean) => {
    for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  };
  return { socket, replies, isClosed: () => closed, until };
}

describe('PolicyServer over TCP on loopback', () => {
  let server: PolicyServer;
  let port: number;
  const asked: RelayQuery[] = [];

  beforeAll(async () => {
    server = new PolicyServer(async (query) => {
      asked.push(query);
      if (query.sender === 'boom@fail.test') throw new Error('database down');
      await new Promise((r) => setTimeout(r, query.sender === 'slow@acme.test' ? 30 : 0));
      return { action: query.relayUsername === 'r-suspended' ? 'REJECT account suspended' : 'OK' };
    });
    port = await server.listen(0);
  });
  afterAll(() => server.close());

  it('answers several requests on one connection, in order, even when the first is slower', async () => {
    const c = await client(port);
    c.socket.write(
      request({ sender: 'slow@acme.test', relayUsername: 'x', sasl_username: 'r-ok', recipient: 'a@b.c' }),
    );
    c.socket.write(request({ sasl_username: 'r-suspended', recipient: 'a@b.c' }));
    c.socket.write(request({ protocol_state: 'DATA', sasl_username: 'r-ok' }));
    await c.until(() => c.replies.length === 3);
    expect(c.replies).toEqual(['action=OK', 'action=REJECT account suspended', 'action=DUNNO']);
    c.socket.end();
  });

  it('serves many connections at once', async () => {
    const clients = await Promise.all(Array.from({ length: 20 }, () => client(port)));
    clients.forEach((c, i) =>
      c.socket.write(request({ sasl_username: i % 2 ? 'r-suspended' : 'r-ok', recipient: `r${i}@x.test` })),
    );
    await Promise.all(clients.map((c) => c.until(() => c.replies.length === 1)));
    clients.forEach((c, i) =>
      expect(c.replies).toEqual([i % 2 ? 'action=REJECT account suspended' : 'action=OK']),
    );
    clients.forEach((c) => c.socket.end());
  });

  it('closes the connection when the decision fails, and goes on serving others', async () => {
    const c = await client(port);
    c.socket.write(request({ sender: 'boom@fail.test', client_address: '192.0.2.1' }));
    await c.until(c.isClosed);
    expect(c.isClosed()).toBe(true);
    expect(c.replies).toEqual([]);
    const other = await client(port);
    other.socket.write(request({ sasl_username: 'r-ok' }));
    await other.until(() => other.replies.length === 1);
    expect(other.replies).toEqual(['action=OK']);
    other.socket.end();
  });

  it('closes a connection that sends an oversized request', async () => {
    const c = await client(port);
    c.socket.write(`a=${'x'.repeat(70_000)}`);
    await c.until(c.isClosed);
    expect(c.isClosed()).toBe(true);
  });
});
