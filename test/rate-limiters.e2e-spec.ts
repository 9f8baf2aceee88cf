import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { LimiterOptions, RateLimiters } from '../src/common/rate-limit/rate-limiters';
import type { RelayCredentials } from '../src/modules/companies/relay-credentials';
import { MAX_FAILURES, RelayAuthenticator } from '../src/relay-agent/sasl/relay-authenticator';
import { freePort } from './support/free-port';
import { TestRedisServer } from './support/redis-server';
import { until } from './support/until';

const LOGIN: LimiterOptions = { keyPrefix: 'rl:login', points: 10, duration: 60 };

/** Knows one relay account, `r-abc` with the password `right`. */
const credentials = {
  check: (username: string, password: string) =>
    Promise.resolve(
      password === 'right' ? { id: 1, uuid: 'u', relayUsername: username.toLowerCase() } : null,
    ),
} as unknown as RelayCredentials;

const fresh = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
const freshRip = () => `198.18.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

/** One hit: the points left, or `refused` (with the limiter's answer) past the limit. */
async function hit(limiter: RateLimiterAbstract, key: string): Promise<number | RateLimiterRes> {
  try {
    return (await limiter.consume(key)).remainingPoints;
  } catch (e: unknown) {
    if (e instanceof RateLimiterRes) return e;
    throw e;
  }
}

/**
 * The counters of RateLimiters with REDIS_URL, on a redis-server of this test's own, as two
 * replicas (or two relay agents) use them: each its own RateLimiters and Redis client. What the
 * API and the agent make of them is in rate-limit.e2e-spec.ts, relay-agent-sasl.e2e-spec.ts and
 * outage.e2e-spec.ts.
 */
describe('Rate-limit counters in Redis (e2e)', () => {
  let server: TestRedisServer;
  let probe: Redis;
  const opened: RateLimiters[] = [];
  let warnings: string[];

  beforeAll(async () => {
    server = await TestRedisServer.create();
    probe = new Redis(server.url, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    probe?.disconnect();
    await server?.destroy();
  });
  beforeEach(() => {
    warnings = [];
    jest
      .spyOn(Logger.prototype, 'warn')
      .mockImplementation((message: unknown) => void warnings.push(String(message)));
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  });
  afterEach(async () => {
    for (const limiters of opened.splice(0)) await limiters.close();
    jest.restoreAllMocks();
  });

  async function replica(url = server.url): Promise<RateLimiters> {
    const limiters = await RateLimiters.connect(url);
    opened.push(limiters);
    return limiters;
  }

  it('two replicas count a key together, under its rl: key, with the window as its expiry', async () => {
    const [a, b] = [(await replica()).create(LOGIN).limiter, (await replica()).create(LOGIN).limiter];
    const key = `127.0.0.1:${fresh('user')}@example.com`;
    for (let i = 0; i < 6; i++) expect(await hit(a, key)).toBe(9 - i);
    for (let i = 0; i < 4; i++) expect(await hit(b, key)).toBe(3 - i);

    // The 11th, the 5th on B: refused on both, until the shared window ends.
    for (const refused of [await hit(b, key), await hit(a, key)]) {
      expect(refused).toBeInstanceOf(RateLimiterRes);
      const { msBeforeNext, remainingPoints } = refused as RateLimiterRes;
      expect(remainingPoints).toBe(0);
      expect(msBeforeNext).toBeGreaterThan(0);
      expect(msBeforeNext).toBeLessThanOrEqual(60_000);
    }
    // Refused hits count too.
    expect(await probe.get(`rl:login:${key}`)).toBe('12');
    const ttl = await probe.pttl(`rl:login:${key}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('two agents share the SMTP AUTH failures of an address, and a success on one clears them for both', async () => {
    const one = new RelayAuthenticator(credentials, await replica());
    const two = new RelayAuthenticator(credentials, await replica());
    const attempt = (agent: RelayAuthenticator, password: string, clientAddress: string) =>
      agent.authenticate({ mechanism: 'PLAIN', username: 'r-abc', password, clientAddress });

    // 9 failures, 5 on one and 4 on two; a success on one clears the address's count in Redis.
    const rip = freshRip();
    for (let i = 0; i < 5; i++) expect(await attempt(one, 'wrong', rip)).toBeNull();
    for (let i = 0; i < 4; i++) expect(await attempt(two, 'wrong', rip)).toBeNull();
    expect(await probe.get(`sasl-fail:${rip}`)).toBe('9');
    expect(await attempt(one, 'right', rip)).toBe('r-abc');
    expect(await probe.exists(`sasl-fail:${rip}`)).toBe(0);
    // So 9 more on two do not block it.
    for (let i = 0; i < 9; i++) expect(await attempt(two, 'wrong', rip)).toBeNull();
    expect(await attempt(two, 'right', rip)).toBe('r-abc');

    // 10 failures of one /64 across both agents block the network on both, for the 10-minute window.
    for (let i = 0; i < MAX_FAILURES; i++) {
      expect(await attempt(i % 2 ? one : two, 'wrong', `2001:db8:77:1::${i + 1}`)).toBeNull();
    }
    expect(await probe.get('sasl-fail:2001:db8:77:1::/64')).toBe('10');
    const ttl = await probe.pttl('sasl-fail:2001:db8:77:1::/64');
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(10 * 60_000);
    expect(await attempt(one, 'right', '2001:db8:77:1:ffff::1')).toBeNull();
    expect(await attempt(two, 'right', '2001:db8:77:1::1')).toBeNull();
    expect(await attempt(two, 'right', '2001:db8:77:2::1')).toBe('r-abc');
    await probe.del(`sasl-fail:${rip}`, 'sasl-fail:2001:db8:77:1::/64');
  });

  it('counts in the process when Redis cannot be reached from the start: still limits, never throws, warns', async () => {
    const limiters = await replica(`redis://127.0.0.1:${await freePort()}`);
    const { limiter } = limiters.create({ keyPrefix: 'rl:ip', points: 3, duration: 60 });
    for (let left = 2; left >= 0; left--) expect(await hit(limiter, '192.0.2.1')).toBe(left);
    const refused = await hit(limiter, '192.0.2.1');
    expect(refused).toBeInstanceOf(RateLimiterRes);
    expect((refused as RateLimiterRes).msBeforeNext).toBeGreaterThan(0);
    expect(await hit(limiter, '192.0.2.2')).toBe(2);

    const agent = new RelayAuthenticator(credentials, limiters);
    for (let i = 0; i < MAX_FAILURES; i++) {
      expect(
        await agent.authenticate({
          mechanism: 'PLAIN',
          username: 'r-abc',
          password: 'wrong',
          clientAddress: '192.0.2.1',
        }),
      ).toBeNull();
    }
    expect(
      await agent.authenticate({
        mechanism: 'PLAIN',
        username: 'r-abc',
        password: 'right',
        clientAddress: '192.0.2.1',
      }),
    ).toBeNull();
    expect(warnings.some((w) => w.startsWith('Redis: '))).toBe(true);
  });

  // Last: it kills the server and starts it again.
  it('Redis killed: counts in the process, counts in Redis again once it is back; an address blocked meanwhile stays blocked', async () => {
    const limiters = await replica();
    const { limiter } = limiters.create({ keyPrefix: 'rl:ip', points: 2, duration: 60 });
    const agent = new RelayAuthenticator(credentials, limiters);
    const attempt = (password: string, clientAddress: string) =>
      agent.authenticate({ mechanism: 'PLAIN', username: 'r-abc', password, clientAddress });
    const before = fresh('before');
    expect(await hit(limiter, before)).toBe(1);
    expect(await probe.get(`rl:ip:${before}`)).toBe('1');

    await server.kill();
    const during = fresh('during');
    expect(await hit(limiter, during)).toBe(1);
    expect(await hit(limiter, during)).toBe(0);
    expect(await hit(limiter, during)).toBeInstanceOf(RateLimiterRes);
    const blocked = freshRip();
    for (let i = 0; i < MAX_FAILURES; i++) expect(await attempt('wrong', blocked)).toBeNull();
    expect(await attempt('right', blocked)).toBeNull();
    expect(await attempt('right', freshRip())).toBe('r-abc');
    await until(() => warnings.some((w) => w.startsWith('Redis: ')), 'the outage is logged');

    await server.start();
    await until(async () => {
      const key = fresh('after');
      await hit(limiter, key);
      return (await probe.get(`rl:ip:${key}`).catch(() => null)) === '1';
    }, 'hits are counted in Redis again');
    // Redis has no count for the address blocked during the outage: the process's holds.
    expect(await probe.exists(`sasl-fail:${blocked}`)).toBe(0);
    expect(await attempt('right', blocked)).toBeNull();
    const rip = freshRip();
    expect(await attempt('wrong', rip)).toBeNull();
    expect(await probe.get(`sasl-fail:${rip}`)).toBe('1');
  });
});
