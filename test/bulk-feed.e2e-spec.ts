import { once } from 'node:events';
import { AddressInfo, connect, Socket } from 'node:net';
import { BULK_FEED_BODIES_IN_FLIGHT, bulkFeedRequests } from '../src/common/http/large-body';
import { CleanLog } from '../src/modules/log-index/entities/clean-log.entity';
import { createPaidCompany } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';
import { until } from './support/until';

const SHIPPER_KEY = 'log-shipper-key-for-tests-0123456789abcdef';

/**
 * The bulk feeds' routes (log batches, provider events) read the bodies of at most
 * BULK_FEED_BODIES_IN_FLIGHT requests at once: a fleet posting 50 batches together waits as 50
 * connections, not as 50 parsed bodies in the service's memory. A request whose client goes
 * away, waiting or halfway through its body, gives its place back.
 */
describe('Bulk feeds: bodies read a few at a time', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await createTestApp({ env: { LOG_SHIPPER_API_KEY: SHIPPER_KEY, LOG_TIMEZONE: 'UTC' } });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
  });
  afterAll(async () => {
    await t.close();
  });

  const batchOf = (relayUsername: string, q: string) =>
    [
      `Nov 21 18:58:30 relay1 postfix/smtpd[22590]: ${q}: client=host.example[1.2.3.4], sasl_method=PLAIN, sasl_username=${relayUsername}`,
      `Nov 21 18:58:31 relay1 postfix/qmgr[15878]: ${q}: from=<news@acme.co.id>, size=920, nrcpt=1 (queue active)`,
      `Nov 21 18:58:35 relay1 postfix/smtp[301]: ${q}: to=<jo@example.net>, relay=mx.example.net[10.74.103.11]:25, delay=1, delays=0.1/0/0.5/0.4, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as R${q})`,
    ].join('\n');

  const head = (body: string) =>
    'POST /api/v1/callback-raw-log HTTP/1.1\r\nhost: relay.test\r\nconnection: close\r\n' +
    `x-api-key: ${SHIPPER_KEY}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n`;

  const open = async (): Promise<Socket> => {
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    return socket;
  };

  /** The status of the socket's whole answer (the server closes it: `connection: close`). */
  const statusOf = async (socket: Socket): Promise<number> => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    await once(socket, 'end');
    return Number(Buffer.concat(chunks).toString('utf8').split(' ')[1]);
  };

  it(`reads ${BULK_FEED_BODIES_IN_FLIGHT} bodies at once; the next batch waits unread, then every one is applied`, async () => {
    const company = await createPaidCompany(t);
    const bodies = Array.from({ length: BULK_FEED_BODIES_IN_FLIGHT + 1 }, (_, n) =>
      batchOf(company.relayUsername, `BULKFEED${n}`),
    );
    // Each of the first batches sends its headers and half its body: it holds its place while it reads.
    const reading = await Promise.all(bodies.slice(0, -1).map(() => open()));
    const answers = reading.map(statusOf);
    reading.forEach((socket, n) => socket.write(head(bodies[n]) + bodies[n].slice(0, 40)));
    await until(() => bulkFeedRequests().inFlight === BULK_FEED_BODIES_IN_FLIGHT, 'every place is taken');

    // The last one comes whole, and waits for a place with its body unread.
    const last = await open();
    const lastAnswer = statusOf(last);
    last.write(head(bodies.at(-1)!) + bodies.at(-1)!);
    await until(() => bulkFeedRequests().waiting === 1, 'the last batch waits for a place');
    expect(
      await t.dataSource.getRepository(CleanLog).countBy({ queueId: `BULKFEED${bodies.length - 1}` }),
    ).toBe(0);

    reading.forEach((socket, n) => socket.write(bodies[n].slice(40)));
    expect(await Promise.all([...answers, lastAnswer])).toEqual(Array(bodies.length).fill(200));
    for (let n = 0; n < bodies.length; n++) {
      expect(
        await t.dataSource.getRepository(CleanLog).findOneByOrFail({ queueId: `BULKFEED${n}` }),
      ).toMatchObject({ companyId: company.id, status: 'sent', to: 'jo@example.net' });
    }
    await until(() => bulkFeedRequests().inFlight === 0, 'every place is given back');
  });

  it('a client that goes away, waiting or halfway through its body, gives its place back', async () => {
    const company = await createPaidCompany(t);
    const body = batchOf(company.relayUsername, 'BULKGONE1');
    const reading = await Promise.all(Array.from({ length: BULK_FEED_BODIES_IN_FLIGHT }, () => open()));
    reading.forEach((socket) => socket.write(head(body) + body.slice(0, 40)));
    await until(() => bulkFeedRequests().inFlight === BULK_FEED_BODIES_IN_FLIGHT, 'every place is taken');
    const waiting = await open();
    waiting.write(head(body) + body);
    await until(() => bulkFeedRequests().waiting === 1, 'a batch waits for a place');

    waiting.destroy();
    for (const socket of reading) socket.destroy();
    await until(
      () => bulkFeedRequests().inFlight === 0 && bulkFeedRequests().waiting === 0,
      'every place is given back',
    );
    const res = await t
      .http()
      .post('/api/v1/callback-raw-log')
      .set('x-api-key', SHIPPER_KEY)
      .set('content-type', 'text/plain')
      .send(body)
      .expect(200);
    expect(res.body).toMatchObject({ status: 'success', data: { parsed: 3, records: 1 } });
  });
});
