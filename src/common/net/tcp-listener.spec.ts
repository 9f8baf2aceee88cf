import { Logger } from '@nestjs/common';
import { connect, Socket } from 'node:net';
import { DEFAULT_MAX_CONNECTIONS, TcpListener, TcpListenerOptions } from './tcp-listener';

/** Greets each connection with `hi\n` and holds it open. */
class Greeter extends TcpListener<{ end(): void }> {
  accepted = 0;

  constructor(options?: TcpListenerOptions) {
    super(options);
  }

  protected accept(socket: Socket): { end(): void } {
    this.accepted += 1;
    socket.write('hi\n');
    socket.on('error', () => socket.destroy());
    return { end: () => socket.end() };
  }
}

interface Client {
  socket: Socket;
  greeted: Promise<boolean>;
  closed: Promise<void>;
}

/** A connection and what becomes of it: greeted (true) or closed before any byte (false). */
function open(port: number): Client {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const greeted = new Promise<boolean>((resolve) => {
    socket.once('data', () => resolve(true));
    socket.once('close', () => resolve(false));
  });
  return { socket, greeted, closed };
}

describe('TcpListener', () => {
  const listeners: Greeter[] = [];
  const clients: Client[] = [];

  afterEach(async () => {
    for (const c of clients.splice(0)) c.socket.destroy();
    await Promise.all(listeners.splice(0).map((l) => l.close()));
    jest.restoreAllMocks();
  });

  async function listening(options?: TcpListenerOptions) {
    const listener = new Greeter(options);
    listeners.push(listener);
    return { listener, port: await listener.listen(0) };
  }

  function connectTo(port: number): Client {
    const client = open(port);
    clients.push(client);
    return client;
  }

  it('holds at most 1,000 connections by default', () => {
    expect(DEFAULT_MAX_CONNECTIONS).toBe(1000);
    expect(new Greeter().maxConnections).toBe(1000);
  });

  it('refuses a limit that is not a positive integer', () => {
    for (const maxConnections of [0, -1, 1.5, Number.NaN]) {
      expect(() => new Greeter({ maxConnections })).toThrow(RangeError);
    }
  });

  it('closes a connection past the limit at once, unread, and takes one again once a place is free', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const { listener, port } = await listening({ maxConnections: 3 });
    const held = [connectTo(port), connectTo(port), connectTo(port)];
    expect(await Promise.all(held.map((c) => c.greeted))).toEqual([true, true, true]);
    expect(listener.connections).toBe(3);

    const past = [connectTo(port), connectTo(port)];
    expect(await Promise.all(past.map((c) => c.greeted))).toEqual([false, false]);
    expect(listener.accepted).toBe(3);
    // The first refusal is logged at once; the next within the minute is only counted.
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toMatch(/Greeter: 1 connection\(s\) closed at once: 3 already open/);

    held[0].socket.destroy();
    await held[0].closed;
    while (listener.connections > 2) await new Promise((r) => setTimeout(r, 5));
    expect(await connectTo(port).greeted).toBe(true);
    expect(listener.accepted).toBe(4);
    expect(await connectTo(port).greeted).toBe(false);
  });

  it('the held connections keep working while others are refused', async () => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const { port } = await listening({ maxConnections: 1 });
    const held = connectTo(port);
    expect(await held.greeted).toBe(true);
    expect(await connectTo(port).greeted).toBe(false);
    expect(held.socket.destroyed).toBe(false);
  });
});
