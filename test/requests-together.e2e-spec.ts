import { once } from 'node:events';
import { AddressInfo, connect, Socket } from 'node:net';
import { eventLoopSlice } from '../src/common/runtime/loop-slice';
import { Company } from '../src/modules/companies/entities/company.entity';
import { LogBatchesService } from '../src/modules/delivery/log-batches.service';
import { CleanLog } from '../src/modules/log-index/entities/clean-log.entity';
import { createPaidCompany } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';
import { countTurns } from './support/loop-turns';
import { until } from './support/until';

const SHIPPER_KEY = 'log-shipper-key-for-tests-0123456789abcdef';
const BATCHES = 40;

function deliveryLine(q: string, n: number): string {
  const second = String(n % 60).padStart(2, '0');
  return `Nov 21 18:59:${second} relay1 postfix/smtp[${1000 + n}]: ${q}: to=<r${n}@example.net>, relay=mx.example.net[10.74.103.11]:25, delay=1, delays=0.1/0/0.5/0.4, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as T${n})`;
}

/** One HTTP/1.1 request as one write: headers and body arrive in the same read. */
function rawBatch(body: string): string {
  return (
    'POST /api/v1/callback-raw-log HTTP/1.1\r\nhost: relay.test\r\nconnection: close\r\n' +
    `x-api-key: ${SHIPPER_KEY}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/** The socket's whole answer (the server closes it: `connection: close`): status and JSON body. */
async function answerOf(socket: Socket): Promise<{ status: number; body: unknown }> {
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  await once(socket, 'end');
  const text = Buffer.concat(chunks).toString('utf8');
  const [head, body] = [text.slice(0, text.indexOf('\r\n\r\n')), text.slice(text.indexOf('\r\n\r\n') + 4)];
  return { status: Number(head.split(' ')[1]), body: JSON.parse(body) };
}

/**
 * Issue "Nothing one client does stalls the others": 40 log batches written to the service at the
 * same moment were all read in one turn of the event loop, and each one's handling (body, guards,
 * parsing, query building) ran before the loop turned again: ~250 ms during which relay-status
 * got no answer. Now each bulk handler takes its place in the loop's time slice (LoopSlice); the
 * slice is set to 0 ms here so the spec does not depend on this machine's speed: whatever began
 * first in a turn goes on, everything after it waits for a later turn.
 */
describe('Requests that arrive together are handled over several turns of the event loop', () => {
  let t: TestApp;
  let port: number;
  const sliceMs = eventLoopSlice.sliceMs;

  beforeAll(async () => {
    t = await createTestApp({ env: { LOG_SHIPPER_API_KEY: SHIPPER_KEY, LOG_TIMEZONE: 'UTC' } });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
  });
  afterAll(async () => {
    eventLoopSlice.sliceMs = sliceMs;
    await t.close();
  });

  it(`${BATCHES} log batches of one queue written at once begin their work in different turns, and all apply`, async () => {
    const company = await createPaidCompany(t);
    const q = 'TOGETHER01';
    await t
      .http()
      .post('/api/v1/callback-raw-log')
      .set('x-api-key', SHIPPER_KEY)
      .set('content-type', 'text/plain')
      .send(
        [
          `Nov 21 18:58:30 relay1 postfix/smtpd[22590]: ${q}: client=host.example[1.2.3.4], sasl_method=PLAIN, sasl_username=${company.relayUsername}`,
          `Nov 21 18:58:31 relay1 postfix/qmgr[15878]: ${q}: from=<news@acme.co.id>, size=920, nrcpt=${BATCHES} (queue active)`,
        ].join('\n'),
      )
      .expect(200);

    // Every connection open and accepted first, so the 40 requests are readable in the same turn.
    const server = t.app.getHttpServer();
    let accepted = 0;
    const onConnection = () => accepted++;
    server.on('connection', onConnection);
    const sockets = Array.from({ length: BATCHES }, () => connect(port, '127.0.0.1'));
    await Promise.all(sockets.map((socket) => once(socket, 'connect')));
    await until(() => accepted === BATCHES, 'the service accepted every connection');
    server.off('connection', onConnection);

    // The loop's turns, counted in its check phase; and the turn each batch's work began in.
    const turns = countTurns();
    const beganIn: number[] = [];
    const batches = t.app.get(LogBatchesService);
    const ingest = batches.ingest.bind(batches);
    const spy = jest.spyOn(batches, 'ingest').mockImplementation((...args) => {
      beganIn.push(turns.now);
      return ingest(...args);
    });

    eventLoopSlice.sliceMs = 0;
    let answers: Array<{ status: number; body: unknown }>;
    try {
      const answered = sockets.map(answerOf);
      sockets.forEach((socket, n) => socket.write(rawBatch(deliveryLine(q, n))));
      answers = await Promise.all(answered);
    } finally {
      eventLoopSlice.sliceMs = sliceMs;
      spy.mockRestore();
      turns.stop();
    }

    expect(answers.map((a) => a.status)).toEqual(Array(BATCHES).fill(200));
    for (const answer of answers)
      expect(answer.body).toMatchObject({
        status: 'success',
        code: 200,
        msg: 'Logs received',
        data: { accepted: 1, parsed: 1, skipped: 0, records: 1 },
      });
    expect(beganIn).toHaveLength(BATCHES);
    // At most one handler begins in a turn's poll phase and one in its check phase.
    const perTurn = new Map<number, number>();
    for (const n of beganIn) perTurn.set(n, (perTurn.get(n) ?? 0) + 1);
    expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(2);

    expect(await t.dataSource.getRepository(CleanLog).countBy({ queueId: q, status: 'sent' })).toBe(BATCHES);
    const used = (await t.dataSource.getRepository(Company).findOneByOrFail({ id: company.id })).used;
    expect(used).toBe(BATCHES);
  });
});
