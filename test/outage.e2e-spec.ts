import type { INestApplicationContext } from '@nestjs/common';
import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { Client } from 'pg';
import type { ChangeNotices as ChangeNoticesType } from '../src/database/change-notices';
import type { RunningRelayAgent } from '../src/relay-agent/relay-agent';
import type { SaslTestClient as SaslTestClientType } from './support/relay-agent/sasl-test-client';
import type { PostfixMilterClient as MilterClientType } from './support/relay-agent/postfix-milter-client';
import type * as Factories from './support/factories';
import type { TestApp } from './support/test-app';
import { fakeDateAt } from './support/clock';
import { PgCluster } from './support/pg-cluster';
import { TestRedisServer } from './support/redis-server';
import { latch, until } from './support/until';

/**
 * quality.md "Reliability": an outage of the database, then of Redis, survived by a running API
 * and relay agent. The test brings its own PostgreSQL cluster (initdb in a temporary folder, a
 * free port) and its own redis-server, stops each mid-traffic and starts it again, so it runs the
 * same way in the SQLite and the PostgreSQL CI runs and touches nothing else on the machine.
 *
 * While PostgreSQL is down the API answers 503 envelopes (`/health` too), callbacks and log
 * batches answer 503 so their senders retry, the policy service and SMTP AUTH close the
 * connection (Postfix applies its default, or answers 454) and the milter answers tempfail.
 * Within 10 s of the restart everything answers again, without restarting anything; the relay
 * agent's LISTEN connection is back (it hears the API again) and its caches forgot what they held
 * (a change made while it was down, announced to nobody, is seen); every request answered 200 has
 * its row, once. While Redis is down, rate limits and SMTP AUTH failures are counted in the
 * process instead, and nothing answers 500.
 */

const LOG_KEY = 'log-shipper-key-for-outage-0123456789abcdef';
const CALLBACK_TOKEN = 'callback-token-for-outage-0123456789';
/** What "answers again" may take after the restart (integrations.md / the issue: 10 s). */
const RECOVERY_MS = 10_000;
const LOGIN_LIMIT = 5;

// Everything that imports the entities is loaded once DATABASE_URL names this test's cluster: the
// entities' column types are chosen from it when their files are imported (column-types.ts).
let createTestApp: typeof import('./support/test-app').createTestApp;
let factories: typeof Factories;
let SaslTestClient: typeof SaslTestClientType;
let PostfixMilterClient: typeof MilterClientType;

/** A Postfix policy request; resolves with the reply (`action=…`) or `closed` when the server closes first. */
function askPolicy(port: number, fields: Record<string, string>): Promise<string> {
  const text = Object.entries({ request: 'smtpd_access_policy', protocol_state: 'RCPT', ...fields })
    .map(([k, v]) => `${k}=${v}\n`)
    .join('');
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${text}\n`));
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf('\n\n');
      if (end !== -1) {
        resolve(buffer.slice(0, end));
        socket.end();
      }
    });
    socket.on('close', () => resolve('closed'));
    socket.on('error', reject);
  });
}

const fresh = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
const freshRip = () => `198.18.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

/** The milter's final answer to one message of an unknown relay user: `t` tempfail, `y` a reply code. */
async function milterAnswer(port: number): Promise<{ command: string; text: string }> {
  const client = await PostfixMilterClient.open(port);
  try {
    await client.negotiate();
    await client.connectEvent();
    const replies = await client.message({
      mailFrom: '<news@outage.example>',
      authUser: fresh('r-none'),
      headers: [
        ['From', 'News <news@outage.example>'],
        ['Subject', 'outage'],
      ],
      body: 'hello\r\n',
    });
    const last = replies[replies.length - 1];
    return { command: last.command, text: last.data.toString('latin1').replace(/\0+$/, '') };
  } finally {
    client.close();
  }
}

/**
 * A sender that posts items one after the other, each until it is answered 200 (a 503 is retried
 * after a short pause, as the log shipper and the payment gateway do). Anything else is recorded.
 */
function sender(post: (id: string) => Promise<{ status: number; body: unknown }>, nextId: () => string) {
  const state = {
    accepted: [] as string[],
    refusals: [] as Array<{ status: number; body: unknown }>,
    unexpected: [] as Array<{ id: string; status: number; body: unknown }>,
    stopped: false,
    done: Promise.resolve(),
  };
  state.done = (async () => {
    while (!state.stopped) {
      const id = nextId();
      for (;;) {
        const res = await post(id);
        if (res.status === 200) {
          state.accepted.push(id);
          break;
        }
        if (res.status !== 503) {
          state.unexpected.push({ id, status: res.status, body: res.body });
          break;
        }
        state.refusals.push(res);
        // The sender's retry interval, not a wait for a condition.
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
  })();
  return state;
}

describe('Outage of PostgreSQL and Redis, survived (e2e)', () => {
  let cluster: PgCluster;
  let redis: TestRedisServer;
  let redisProbe: Redis;
  let t: TestApp;
  let agent: INestApplicationContext;
  let running: RunningRelayAgent;
  let ports: { policy: number; sasl: number; milter: number };
  const savedDatabaseUrl = process.env.DATABASE_URL;

  beforeAll(async () => {
    [cluster, redis] = await Promise.all([PgCluster.create(), TestRedisServer.create()]);
    process.env.DATABASE_URL = cluster.url;
    ({ createTestApp } = await import('./support/test-app'));
    factories = await import('./support/factories');
    ({ SaslTestClient } = await import('./support/relay-agent/sasl-test-client'));
    ({ PostfixMilterClient } = await import('./support/relay-agent/postfix-milter-client'));
    const { NestFactory } = await import('@nestjs/core');
    const { RelayAgentModule } = await import('../src/relay-agent/relay-agent.module');
    const { startRelayAgent } = await import('../src/relay-agent/relay-agent');

    t = await createTestApp({
      env: {
        LOG_SHIPPER_API_KEY: LOG_KEY,
        PAYMENT_CALLBACK_TOKEN: CALLBACK_TOKEN,
        LOG_TIMEZONE: 'UTC',
        REDIS_URL: redis.url,
        LOGIN_RATE_LIMIT_PER_MINUTE: String(LOGIN_LIMIT),
      },
    });
    // The agent: another application on the same database and Redis, as production runs it.
    const saved = { ...process.env };
    Object.assign(process.env, {
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      DATABASE_URL: String((t.dataSource.options as { url: string }).url),
      REDIS_URL: redis.url,
    });
    try {
      agent = await NestFactory.createApplicationContext(RelayAgentModule, { logger: false });
    } finally {
      process.env = saved;
    }
    running = await startRelayAgent(agent, '127.0.0.1', { policy: 'any', sasl: 'any', milter: 'any' });
    ports = running.ports as typeof ports;
    redisProbe = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  }, 120_000);

  afterAll(async () => {
    await running?.close();
    await agent?.close();
    await t?.close();
    redisProbe?.disconnect();
    await Promise.all([cluster?.destroy(), redis?.destroy()]);
    if (savedDatabaseUrl === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = savedDatabaseUrl;
  }, 60_000);

  const logBatch = (queueId: string, relayUsername: string) =>
    [
      `Nov 21 18:58:30 relay1 postfix/smtpd[22590]: ${queueId}: client=host.example[1.2.3.4], sasl_method=PLAIN, sasl_username=${relayUsername}`,
      `Nov 21 18:58:31 relay1 postfix/qmgr[15878]: ${queueId}: from=<news@acme.co.id>, size=920, nrcpt=1 (queue active)`,
      `Nov 21 18:58:35 relay1 postfix/smtp[301]: ${queueId}: to=<jo@example.net>, relay=mx.example.net[10.74.103.11]:25, delay=1, delays=0.4/0.06/0.1/0.03, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as F12DF84004)`,
    ].join('\n');

  const count = async (sql: string, params: unknown[]) =>
    Number((await t.dataSource.query<Array<{ n: string | number }>>(sql, params))[0].n);

  it('PostgreSQL stopped mid-traffic: 503s, closed connections and tempfails; everything answers again within 10 s of the restart; no answered row lost', async () => {
    const { createPaidCompany, createActiveUser, createAdmin, bearer } = factories;
    const { ChangeNotices } = await import('../src/database/change-notices');
    const { JobRegistry } = await import('../src/modules/jobs/job-registry');
    const watched = await createPaidCompany(t);
    const traffic = await createPaidCompany(t);
    await t.dataSource.query('UPDATE companies SET quota = 1000000 WHERE id = $1', [traffic.id]);
    const owner = await createActiveUser(t);
    const admin = await createAdmin(t, 'admin');

    // The agent's notices connection listens; its reconnect signal is what the test waits for later.
    const agentNotices: ChangeNoticesType = agent.get(ChangeNotices);
    await agentNotices.listening();
    const reconnected = latch();
    const stopWatching = agentNotices.onReconnect(() => reconnected.open());

    // SMTP AUTH: a connection opened before the outage, as Postfix keeps one per smtpd.
    const sasl = await SaslTestClient.connect(ports.sasl);
    await sasl.handshake();
    expect(await sasl.plain(fresh('r-nobody'), 'wrong', { rip: freshRip() })).toMatch(/^FAIL\t1\t/);

    const logs = sender(
      (id) =>
        t
          .http()
          .post('/api/v1/callback-raw-log')
          .set('x-api-key', LOG_KEY)
          .set('content-type', 'text/plain')
          .send(logBatch(id, traffic.relayUsername))
          .then((r) => ({ status: r.status, body: r.body as unknown })),
      () => randomBytes(5).toString('hex').toUpperCase(),
    );
    const callbacks = sender(
      (id) =>
        t
          .http()
          .post('/api/v1/callback-payment')
          .set('x-callback-token', CALLBACK_TOKEN)
          .send({ id, external_id: `INV/OUTAGE/${id}`, status: 'PAID', amount: 1000, currency: 'IDR' })
          .then((r) => ({ status: r.status, body: r.body as unknown })),
      () => fresh('outage-inv'),
    );
    try {
      await until(
        () => logs.accepted.length >= 3 && callbacks.accepted.length >= 3,
        'traffic is answered before the outage',
        20_000,
      );
      // Cached by the agent from here on: the decision the restart must forget.
      expect(
        await askPolicy(ports.policy, { sasl_username: watched.relayUsername, recipient: 'jo@example.net' }),
      ).toBe('action=OK');

      await cluster.stop('immediate');
      const before = { logs: logs.refusals.length, callbacks: callbacks.refusals.length };

      // The API: 503 envelopes, /health included.
      const health = await t.http().get('/health');
      expect(health.status).toBe(503);
      expect(health.body).toMatchObject({ status: 'failed', code: 503, data: null });
      const read = await t
        .http()
        .get(`/api/v1/companies/${owner.companyUuid}`)
        .set(...bearer(owner.accessToken));
      expect(read.status).toBe(503);
      expect(read.body).toMatchObject({ status: 'failed', code: 503, data: null });
      const login = await t
        .http()
        .post('/api/v1/users/login')
        .send({ email: owner.email, password: owner.password });
      expect(login.status).toBe(503);
      expect(login.body).toMatchObject({ status: 'failed', code: 503, data: null });
      // Log batches and callbacks: 503, so their senders retry.
      await until(
        () => logs.refusals.length > before.logs && callbacks.refusals.length > before.callbacks,
        'log batches and callbacks are refused with 503 during the outage',
      );
      for (const refusal of [...logs.refusals, ...callbacks.refusals]) {
        expect(refusal.body).toMatchObject({ status: 'failed', code: 503, data: null });
      }
      // The agent: the policy service closes the connection, SMTP AUTH closes, the milter tempfails.
      expect(
        await askPolicy(ports.policy, { sasl_username: fresh('r-nobody'), recipient: 'jo@example.net' }),
      ).toBe('closed');
      await expect(sasl.plain(fresh('r-nobody'), 'secret', { rip: freshRip() })).rejects.toThrow(
        'connection closed by the server',
      );
      expect((await milterAnswer(ports.milter)).command).toBe('t');

      // A change made while the agent's notices connection is lost: announced to nobody.
      await cluster.start();
      const restarted = Date.now();
      const direct = new Client({ connectionString: String((t.dataSource.options as { url: string }).url) });
      await direct.connect();
      try {
        await direct.query(
          "UPDATE companies SET status = 'suspended', suspended_reason = 'outage test' WHERE id = $1",
          [watched.id],
        );
      } finally {
        await direct.end();
      }

      // Everything answers again within 10 s of the restart, nothing restarted.
      await until(
        async () => (await t.http().get('/health')).status === 200,
        '/health answers 200 after the restart',
        RECOVERY_MS,
      );
      await until(
        async () =>
          (
            await t
              .http()
              .get(`/api/v1/companies/${owner.companyUuid}`)
              .set(...bearer(owner.accessToken))
          ).status === 200,
        'an authenticated read answers 200 after the restart',
        RECOVERY_MS - (Date.now() - restarted),
      );
      const acceptedAtRestart = { logs: logs.accepted.length, callbacks: callbacks.accepted.length };
      await until(
        () =>
          logs.accepted.length > acceptedAtRestart.logs &&
          callbacks.accepted.length > acceptedAtRestart.callbacks,
        'log batches and callbacks are answered 200 after the restart',
        RECOVERY_MS - (Date.now() - restarted),
      );
      await until(
        async () =>
          (await askPolicy(ports.policy, {
            sasl_username: fresh('r-nobody'),
            recipient: 'jo@example.net',
          })) !== 'closed',
        'the policy service answers after the restart',
        RECOVERY_MS - (Date.now() - restarted),
      );
      const client = await SaslTestClient.connect(ports.sasl);
      try {
        await client.handshake();
        await until(
          async () => /^FAIL\t/.test(await client.plain(fresh('r-nobody'), 'wrong', { rip: freshRip() })),
          'SMTP AUTH answers after the restart',
          RECOVERY_MS - (Date.now() - restarted),
        );
      } finally {
        client.close();
      }
      const milter = await milterAnswer(ports.milter);
      expect(milter).toEqual({
        command: 'y',
        text: '550 5.7.1 Authentication required',
      });
      // The agent's LISTEN connection is back, and its caches forgot what they held before.
      await reconnected.wait;
      expect(
        await askPolicy(ports.policy, { sasl_username: watched.relayUsername, recipient: 'jo@example.net' }),
      ).toBe('action=REJECT account suspended');
      // And LISTEN hears again: the API resumes the company, the agent hears it before its cache expires.
      const heard = new Promise<void>((resolve) => {
        const stop = agentNotices.listen('relay_company_state', () => {
          stop();
          resolve();
        });
      });
      await t
        .http()
        .patch(`/api/v1/admins/companies/${watched.uuid}`)
        .set(...bearer(admin.accessToken))
        .send({ status: 'active' })
        .expect(200);
      await heard;
      expect(
        await askPolicy(ports.policy, { sasl_username: watched.relayUsername, recipient: 'jo@example.net' }),
      ).toBe('action=OK');
      expect(Date.now() - restarted).toBeLessThan(RECOVERY_MS);
    } finally {
      stopWatching();
      logs.stopped = true;
      callbacks.stopped = true;
      await Promise.all([logs.done, callbacks.done]);
      sasl.close();
    }

    // Nothing lost, nothing twice. A 200 means stored (quality.md): every item answered 200 has its
    // row in the inbox, once. A batch stored just before the outage and not applied (its error
    // could not be recorded either) is the retry job's, which takes it once 30 s have passed
    // without an answer: the job runs as it would then, the app's clock moved on.
    expect(logs.unexpected).toEqual([]);
    expect(callbacks.unexpected).toEqual([]);
    expect(await count('SELECT COUNT(*) AS n FROM log_batches', [])).toBe(logs.accepted.length);
    expect(
      await count('SELECT COUNT(*) AS n FROM payment_events WHERE gateway_invoice_id = ANY($1)', [
        callbacks.accepted,
      ]),
    ).toBe(callbacks.accepted.length);
    expect(
      await count(
        "SELECT COUNT(*) AS n FROM payment_events WHERE gateway_invoice_id LIKE 'outage-inv-%'",
        [],
      ),
    ).toBe(callbacks.accepted.length);
    const clock = fakeDateAt(Date.now());
    try {
      clock.set(Date.now() + 31_000);
      await t.app.get(JobRegistry).get('retry-callbacks')!.run();
    } finally {
      jest.useRealTimers();
    }
    expect(await count('SELECT COUNT(*) AS n FROM log_batches WHERE outcome IS NULL', [])).toBe(0);
    expect(await count('SELECT COUNT(*) AS n FROM payment_events WHERE outcome IS NULL', [])).toBe(0);
    expect(
      await count('SELECT COUNT(*) AS n FROM clean_logs WHERE queue_id = ANY($1)', [logs.accepted]),
    ).toBe(logs.accepted.length);
    expect(
      await count("SELECT COUNT(*) AS n FROM clean_logs WHERE company_id = $1 AND status = 'sent'", [
        traffic.id,
      ]),
    ).toBe(logs.accepted.length);
  }, 90_000);

  it('Redis killed: login limits and SMTP AUTH failures are counted in the process, nothing answers 500; counted in Redis again after its restart', async () => {
    const { createActiveUser, bearer, uniqueEmail } = factories;
    const { MAX_FAILURES } = await import('../src/relay-agent/sasl/relay-authenticator');
    const owner = await createActiveUser(t);
    const relay = (
      await t
        .http()
        .post(`/api/v1/companies/${owner.companyUuid}/relay-password`)
        .set(...bearer(owner.accessToken))
        .expect(200)
    ).body.data as { relayUsername: string; relayPassword: string };
    const wrongLogin = (email: string) =>
      t.http().post('/api/v1/users/login').send({ email, password: 'not the password' });
    const sasl = await SaslTestClient.connect(ports.sasl);
    await sasl.handshake();
    try {
      // Counted in Redis while it runs.
      await redisProbe.connect();
      const counted = uniqueEmail('counted');
      expect((await wrongLogin(counted)).status).toBe(401);
      expect(await redisProbe.keys(`rl:login:*${counted}`)).toHaveLength(1);
      const rip = freshRip();
      expect(await sasl.plain(relay.relayUsername, 'wrong', { rip })).toMatch(/^FAIL\t/);
      expect(await redisProbe.get(`sasl-fail:${rip}`)).toBe('1');
      redisProbe.disconnect();

      await redis.kill();

      // The API: answers as usual, the login limit counted in the process.
      const email = uniqueEmail('limited');
      const answers: number[] = [];
      for (let i = 0; i <= LOGIN_LIMIT; i++) {
        const res = await wrongLogin(email);
        answers.push(res.status);
        if (res.status === 429) expect(res.body).toMatchObject({ status: 'failed', code: 429, data: null });
      }
      expect(answers).toEqual([...Array<number>(LOGIN_LIMIT).fill(401), 429]);
      const read = await t
        .http()
        .get(`/api/v1/companies/${owner.companyUuid}`)
        .set(...bearer(owner.accessToken));
      expect(read.status).toBe(200);
      expect((await t.http().get('/health')).status).toBe(200);

      // SMTP AUTH: the failures of an address counted in the process block it, the others log in.
      const blocked = freshRip();
      for (let i = 0; i < MAX_FAILURES; i++) {
        expect(await sasl.plain(relay.relayUsername, `wrong ${i}`, { rip: blocked })).toMatch(/^FAIL\t/);
      }
      expect(await sasl.plain(relay.relayUsername, relay.relayPassword, { rip: blocked })).toMatch(/^FAIL\t/);
      expect(await sasl.plain(relay.relayUsername, relay.relayPassword, { rip: freshRip() })).toMatch(
        /^OK\t/,
      );

      // Back in Redis within 10 s of its restart, nothing restarted.
      await redis.start();
      await redisProbe.connect();
      await until(
        async () => {
          const probe = uniqueEmail('back');
          expect((await wrongLogin(probe)).status).toBe(401);
          return (await redisProbe.keys(`rl:login:*${probe}`)).length === 1;
        },
        'login attempts are counted in Redis again',
        RECOVERY_MS,
      );
      await until(
        async () => {
          const probe = freshRip();
          expect(await sasl.plain(relay.relayUsername, 'wrong', { rip: probe })).toMatch(/^FAIL\t/);
          return (await redisProbe.get(`sasl-fail:${probe}`)) === '1';
        },
        'SMTP AUTH failures are counted in Redis again',
        RECOVERY_MS,
      );
      // The address blocked during the outage stays blocked.
      expect(await sasl.plain(relay.relayUsername, relay.relayPassword, { rip: blocked })).toMatch(/^FAIL\t/);
    } finally {
      sasl.close();
      redisProbe.disconnect();
    }
  }, 60_000);
});
