import { INestApplicationContext, Logger } from '@nestjs/common';
import argon2 from 'argon2';
import Redis from 'ioredis';
import { createHash, createSecretKey, randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Company } from '../src/modules/companies/entities/company.entity';
import {
  makeSubmissionToken,
  SUBMISSION_TOKEN_TTL_MS,
} from '../src/modules/relay-submission/submission-token';
import { SubmissionTokens } from '../src/modules/relay-submission/submission-tokens';
import { RunningRelayAgent, startRelayAgent } from '../src/relay-agent/relay-agent';
import { SaslTestClient } from './support/relay-agent/sasl-test-client';
import { bearer, createActiveUser, RegisteredUser, LoggedIn } from './support/factories';
import { relayAgentApplication } from './support/relay-agent-app';
import { createTestApp, TestApp } from './support/test-app';

const REDIS_URL = 'redis://127.0.0.1:6379';
/** RELAY_SUBMIT_SECRET of the agents that take submission tokens, and its key as the service holds it. */
const SUBMIT_SECRET = 'relay-submit-secret-for-the-sasl-e2e-0123';
const SUBMIT_KEY = createSecretKey(Buffer.from(SUBMIT_SECRET, 'utf8'));
const FAIL = (id: number) => `FAIL\t${id}\treason=Authentication failed`;
const digest = (password: string) => `sha256:${createHash('sha256').update(password).digest('hex')}`;

/**
 * SMTP AUTH through the relay agent's SASL listener (integrations.md "Relay agent"), its
 * application on the API's database as production runs the two side by side: credentials handed
 * out by `POST /companies/:uuid/relay-password` log in over TCP with the bytes Postfix sends.
 */
describe('Relay agent: SMTP AUTH on the database (e2e)', () => {
  let t: TestApp;
  const agents: Array<{ app: INestApplicationContext; running: RunningRelayAgent }> = [];
  const clients: SaslTestClient[] = [];
  /** Every relay password and submission token handed out: none may appear in what the agent logs. */
  const issued: string[] = [];
  const logged: unknown[][] = [];

  beforeAll(async () => {
    t = await createTestApp();
    for (const level of ['log', 'warn', 'error'] as const) {
      const original = Logger.prototype[level];
      jest.spyOn(Logger.prototype, level).mockImplementation(function (this: Logger, ...args: unknown[]) {
        logged.push(args);
        return original.apply(this, args as Parameters<typeof original>);
      });
    }
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    for (const { app, running } of agents) {
      await running.close();
      await app.close();
    }
    await t?.close();
    jest.restoreAllMocks();
  });

  /** Another process's relay agent (its Nest application) on the API's database; SASL on a free port. */
  async function startAgent(
    env: Record<string, string> = {},
  ): Promise<{ app: INestApplicationContext; port: number }> {
    const app = await relayAgentApplication(t, env);
    const running = await startRelayAgent(app, '127.0.0.1', { policy: 0, sasl: 'any', milter: 0 });
    agents.push({ app, running });
    expect(running.ports.policy).toBeUndefined();
    return { app, port: running.ports.sasl! };
  }

  async function connect(port: number): Promise<SaslTestClient> {
    const c = await SaslTestClient.connect(port);
    clients.push(c);
    await c.handshake();
    return c;
  }

  async function newRelayPassword(
    owner: RegisteredUser & LoggedIn,
  ): Promise<{ username: string; password: string }> {
    const res = await t
      .http()
      .post(`/api/v1/companies/${owner.companyUuid}/relay-password`)
      .set(...bearer(owner.accessToken))
      .expect(200);
    issued.push(res.body.data.relayPassword);
    return { username: res.body.data.relayUsername, password: res.body.data.relayPassword };
  }

  async function storedHash(companyUuid: string): Promise<string | null> {
    const row = await t.dataSource
      .getRepository(Company)
      .createQueryBuilder('c')
      .addSelect('c.relayPasswordHash')
      .where('c.uuid = :uuid', { uuid: companyUuid })
      .getOneOrFail();
    return row.relayPasswordHash;
  }

  /** A client address of its own for each test, so failure counts never meet. */
  const freshRip = () => `198.18.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

  describe('one agent, counters in the process', () => {
    let port: number;
    beforeAll(async () => {
      ({ port } = await startAgent());
    });

    it('logs in with the relay credentials the API handed out, the username in any case', async () => {
      const owner = await createActiveUser(t);
      const { username, password } = await newRelayPassword(owner);
      expect(username).toMatch(/^r-[0-9a-z]{8}$/);
      const c = await connect(port);
      const rip = freshRip();
      expect(await c.plain(username, password, { rip })).toBe(`OK\t1\tuser=${username}`);
      expect(await c.plain(username.toUpperCase(), password, { rip, initial: false })).toBe(
        `OK\t2\tuser=${username}`,
      );
      expect(await c.login(username.toUpperCase(), password, { rip })).toBe(`OK\t3\tuser=${username}`);
      expect(await c.login(username, password, { rip, initial: true })).toBe(`OK\t4\tuser=${username}`);
      expect(await c.plain(username, `${password}x`, { rip })).toBe(FAIL(5));
      expect(await c.plain('r-nobody00', password, { rip })).toBe(FAIL(6));
      expect(await c.plain(username, password, { rip, authzid: 'r-someone' })).toBe(FAIL(7));
      // Stored as its SHA-256 digest only.
      expect(await storedHash(owner.companyUuid)).toBe(digest(password));
    });

    it('answers each of many attempts at the same moment for its own credentials', async () => {
      // On PostgreSQL concurrent attempts share one read of the usernames; every answer must
      // still be its own: right, wrong password, unknown user, another case, the same user twice.
      const owners = await Promise.all([createActiveUser(t), createActiveUser(t), createActiveUser(t)]);
      const accounts = await Promise.all(owners.map((o) => newRelayPassword(o)));
      const attempts = [
        ...accounts.map((a) => ({ ...a, expected: (id: number) => `OK\t${id}\tuser=${a.username}` })),
        { ...accounts[0], password: `${accounts[0].password}x`, expected: FAIL },
        {
          ...accounts[1],
          username: accounts[1].username.toUpperCase(),
          expected: (id: number) => `OK\t${id}\tuser=${accounts[1].username}`,
        },
        { username: 'r-nobody01', password: accounts[2].password, expected: FAIL },
        { ...accounts[2], expected: (id: number) => `OK\t${id}\tuser=${accounts[2].username}` },
        { username: accounts[1].username, password: accounts[0].password, expected: FAIL },
      ];
      const clientsOfAttempts = await Promise.all(attempts.map(() => connect(port)));
      const answers = await Promise.all(
        attempts.map((a, i) => clientsOfAttempts[i].plain(a.username, a.password, { rip: freshRip() })),
      );
      expect(answers).toEqual(attempts.map((a) => a.expected(1)));
    });

    it('refuses the old password at once after a rotation, and takes the new one', async () => {
      const owner = await createActiveUser(t);
      const first = await newRelayPassword(owner);
      const c = await connect(port);
      const rip = freshRip();
      expect(await c.plain(first.username, first.password, { rip })).toBe(`OK\t1\tuser=${first.username}`);
      const second = await newRelayPassword(owner);
      expect(await c.plain(first.username, first.password, { rip })).toBe(FAIL(2));
      expect(await c.plain(second.username, second.password, { rip })).toBe(`OK\t3\tuser=${first.username}`);
    });

    it('checks a password stored as an argon2 hash once, then stores its digest', async () => {
      const owner = await createActiveUser(t);
      const { username } = await newRelayPassword(owner);
      const password = randomBytes(24).toString('base64url');
      issued.push(password);
      const legacy = await argon2.hash(password, { type: argon2.argon2id });
      await t.dataSource
        .getRepository(Company)
        .update({ uuid: owner.companyUuid }, { relayPasswordHash: legacy });
      const c = await connect(port);
      const rip = freshRip();

      const verify = jest.spyOn(argon2, 'verify');
      try {
        expect(await c.plain(username, 'not it', { rip })).toBe(FAIL(1));
        expect(await storedHash(owner.companyUuid)).toBe(legacy);
        expect(await c.plain(username, password, { rip })).toBe(`OK\t2\tuser=${username}`);
        expect(await storedHash(owner.companyUuid)).toBe(digest(password));
        expect(await c.plain(username, password, { rip })).toBe(`OK\t3\tuser=${username}`);
        expect(verify).toHaveBeenCalledTimes(2);
      } finally {
        verify.mockRestore();
      }
    });

    it('never overwrites a password rotated while the argon2 hash was being checked', async () => {
      const owner = await createActiveUser(t);
      const { username } = await newRelayPassword(owner);
      const old = randomBytes(24).toString('base64url');
      issued.push(old);
      await t.dataSource
        .getRepository(Company)
        .update({ uuid: owner.companyUuid }, { relayPasswordHash: await argon2.hash(old) });
      let rotated: { password: string } | undefined;
      const original = argon2.verify.bind(argon2);
      const verify = jest.spyOn(argon2, 'verify').mockImplementation(async (hash, plain) => {
        rotated = await newRelayPassword(owner);
        return original(hash, plain);
      });
      const c = await connect(port);
      const rip = freshRip();
      try {
        // The attempt began before the rotation: it may pass, but must not store the old password.
        expect(await c.plain(username, old, { rip })).toBe(`OK\t1\tuser=${username}`);
      } finally {
        verify.mockRestore();
      }
      expect(await storedHash(owner.companyUuid)).not.toBe(digest(old));
      expect(await c.plain(username, old, { rip })).toBe(FAIL(2));
      expect(await c.plain(username, rotated!.password, { rip })).toBe(`OK\t3\tuser=${username}`);
    });

    it('blocks an address after 10 failures, even with the right password, while another address logs in', async () => {
      const owner = await createActiveUser(t);
      const { username, password } = await newRelayPassword(owner);
      const c = await connect(port);
      const rip = freshRip();
      for (let id = 1; id <= 10; id++) expect(await c.plain(username, `wrong${id}`, { rip })).toBe(FAIL(id));
      expect(await c.plain(username, password, { rip })).toBe(FAIL(11));
      expect(await c.login(username, password, { rip })).toBe(FAIL(12));
      expect(await c.plain(username, password, { rip: freshRip() })).toBe(`OK\t13\tuser=${username}`);
    });
  });

  describe('two agents with REDIS_URL', () => {
    const rip = freshRip();
    afterAll(async () => {
      const redis = new Redis(REDIS_URL);
      await redis.del(`sasl-fail:${rip}`);
      await redis.quit();
    });

    it('share the failure counts of an address', async () => {
      const one = await startAgent({ REDIS_URL });
      const two = await startAgent({ REDIS_URL });
      const owner = await createActiveUser(t);
      const { username, password } = await newRelayPassword(owner);
      const [a, b] = [await connect(one.port), await connect(two.port)];
      for (let i = 0; i < 5; i++) {
        expect(await a.plain(username, 'wrong', { rip })).toBe(FAIL(a.nextId - 1));
        expect(await b.plain(username, 'wrong', { rip })).toBe(FAIL(b.nextId - 1));
      }
      expect(await a.plain(username, password, { rip })).toBe(FAIL(6));
      expect(await b.plain(username, password, { rip })).toBe(FAIL(6));
      expect(await b.plain(username, password, { rip: freshRip() })).toBe(`OK\t7\tuser=${username}`);
    });
  });

  describe('relay submission tokens (auth.md "Relay submission token", platform.md "Sending by HTTP")', () => {
    let app: INestApplicationContext;
    let port: number;
    beforeAll(async () => {
      ({ app, port } = await startAgent({ RELAY_SUBMIT_SECRET: SUBMIT_SECRET }));
    });

    /** A token for `username` as the service makes it with the shared secret (`now`: when it was made). */
    function token(username: string, now = Date.now(), key = SUBMIT_KEY): string {
      const made = makeSubmissionToken(key, username, now);
      issued.push(made);
      return made;
    }

    /** The company's relay username as registration gave it, read from its row. */
    async function relayUsername(companyUuid: string): Promise<string> {
      return (await t.dataSource.getRepository(Company).findOneByOrFail({ uuid: companyUuid })).relayUsername;
    }

    it('logs in with a token made for the relay username, as the canonical relay username, beside the password', async () => {
      const owner = await createActiveUser(t);
      const { username, password } = await newRelayPassword(owner);
      const c = await connect(port);
      const rip = freshRip();
      const made = app.get(SubmissionTokens).make(username);
      issued.push(made);
      expect(made).toMatch(/^rst1\.\d+\.[A-Za-z0-9_-]{43}$/);
      expect(await c.plain(username, made, { rip })).toBe(`OK\t1\tuser=${username}`);
      expect(await c.plain(username.toUpperCase(), made, { rip })).toBe(`OK\t2\tuser=${username}`);
      expect(await c.login(username, token(username.toUpperCase()), { rip })).toBe(`OK\t3\tuser=${username}`);
      expect(await c.plain(username, password, { rip })).toBe(`OK\t4\tuser=${username}`);
    });

    it('logs in with a token for a company that never asked for a relay password', async () => {
      const owner = await createActiveUser(t);
      const username = await relayUsername(owner.companyUuid);
      expect(await storedHash(owner.companyUuid)).toBeNull();
      const c = await connect(port);
      expect(await c.plain(username, token(username), { rip: freshRip() })).toBe(`OK\t1\tuser=${username}`);
    });

    it('refuses, as a wrong password, a token for another username, an expired one, one of another key, one tampered with', async () => {
      const [owner, other] = await Promise.all([createActiveUser(t), createActiveUser(t)]);
      const [username, otherUsername] = await Promise.all([
        relayUsername(owner.companyUuid),
        relayUsername(other.companyUuid),
      ]);
      const c = await connect(port);
      const rip = freshRip();
      const valid = token(username);
      const otherKey = createSecretKey(Buffer.from('another-relay-submit-secret-0123456789ab', 'utf8'));
      expect(await c.plain(username, token(otherUsername), { rip })).toBe(FAIL(1));
      expect(await c.plain(otherUsername, valid, { rip })).toBe(FAIL(2));
      expect(
        await c.plain(username, token(username, Date.now() - SUBMISSION_TOKEN_TTL_MS - 1000), { rip }),
      ).toBe(FAIL(3));
      expect(await c.plain(username, token(username, Date.now(), otherKey), { rip })).toBe(FAIL(4));
      const at = valid.length - 20;
      const tampered = `${valid.slice(0, at)}${valid[at] === 'A' ? 'B' : 'A'}${valid.slice(at + 1)}`;
      expect(await c.plain(username, tampered, { rip })).toBe(FAIL(5));
      expect(await c.plain(username, 'rst1.', { rip })).toBe(FAIL(6));
      // A token for a username no company has.
      expect(await c.plain('r-nobody02', token('r-nobody02'), { rip })).toBe(FAIL(7));
      // Failures, not a block: the valid token still logs in from this address.
      expect(await c.plain(username, valid, { rip })).toBe(`OK\t8\tuser=${username}`);
    });

    it('counts failed tokens toward the block of the address, and the block holds for a valid token', async () => {
      const owner = await createActiveUser(t);
      const username = await relayUsername(owner.companyUuid);
      const c = await connect(port);
      const rip = freshRip();
      const expired = token(username, Date.now() - SUBMISSION_TOKEN_TTL_MS - 1000);
      for (let id = 1; id <= 10; id++) expect(await c.plain(username, expired, { rip })).toBe(FAIL(id));
      expect(await c.plain(username, token(username), { rip })).toBe(FAIL(11));
      expect(await c.plain(username, token(username), { rip: freshRip() })).toBe(`OK\t12\tuser=${username}`);
    });

    it('without RELAY_SUBMIT_SECRET takes no token: one is checked as a password, and fails as a wrong one', async () => {
      const without = await startAgent({ RELAY_SUBMIT_SECRET: '' });
      const owner = await createActiveUser(t);
      const { username, password } = await newRelayPassword(owner);
      const c = await connect(without.port);
      const rip = freshRip();
      expect(() => without.app.get(SubmissionTokens).make(username)).toThrow(
        'RELAY_SUBMIT_SECRET is not set',
      );
      expect(await c.plain(username, token(username), { rip })).toBe(FAIL(1));
      expect(await c.plain(username, password, { rip })).toBe(`OK\t2\tuser=${username}`);
    });
  });

  it('closes the connection, never FAILs, when its database is gone', async () => {
    const { app, port } = await startAgent();
    const owner = await createActiveUser(t);
    const { username, password } = await newRelayPassword(owner);
    const c = await connect(port);
    await app.get(DataSource).destroy();
    c.send(
      `AUTH\t1\tPLAIN\tservice=smtp\tnologin\tlip=127.0.0.1\trip=192.0.2.1\tresp=${Buffer.from(`\0${username}\0${password}`).toString('base64')}\n`,
    );
    await expect(c.line()).rejects.toThrow('connection closed');
  });

  it('logs usernames, never a relay password or a submission token', () => {
    const text = JSON.stringify(logged);
    expect(text).toContain('SMTP AUTH succeeded');
    expect(text).toContain('SMTP AUTH failed');
    for (const password of issued) expect(text).not.toContain(password);
  });
});
