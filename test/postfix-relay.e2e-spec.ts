import { INestApplicationContext } from '@nestjs/common';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authenticate } from 'mailauth';
import { Company } from '../src/modules/companies/entities/company.entity';
import { CleanLog } from '../src/modules/log-index/entities/clean-log.entity';
import { SuppressionEntry } from '../src/modules/suppression/entities/suppression-entry.entity';
import { RunningRelayAgent, startRelayAgent } from '../src/relay-agent/relay-agent';
import { publishSigningDomain, TestDnsServer } from './support/dns-server';
import { bearer, createActiveUser, createAdmin, storeDomain } from './support/factories';
import {
  flushQueue,
  machinePostfixState,
  postfixAvailable,
  postfixLogFile,
  startPostfix,
  stopPostfix,
  swaks,
} from './support/postfix';
import { SmtpSink } from './support/smtp-sink';
import { relayAgentApplication } from './support/relay-agent-app';
import { createTestApp, TestApp } from './support/test-app';

const available = postfixAvailable();
const DAY = 86_400_000;
const LOG_SHIPPER_KEY = 'log-shipper-key-for-the-postfix-test-0123456789';
/** The API and the relay agent share it: the agent decrypts the DKIM keys the API stored. */
const ENCRYPTION_KEY = randomBytes(32).toString('base64');
const SELECTOR = 'rs202611';
if (!available.ok) {
  // CI installs Postfix and swaks (.ci/run): there, a missing one is a failure, not a skip.
  if (process.env.CI) throw new Error(`The real-Postfix test cannot run in CI: ${available.why}`);
  console.warn(`Skipping the real-Postfix test: ${available.why}`);
}

/**
 * A stock Postfix with the relay agent beside it (`npm run relay-agent`: the policy check, SMTP
 * AUTH and the milter, with the operator guide's main.cf lines): the messages are sent with swaks to
 * the private Postfix instance, and what is relayed reaches a loopback SMTP sink as Postfix's next hop. The
 * agent is its own application on the API's database, as production runs the two side by side:
 * what the API changes reaches it only as the other processes hear of it. The domains' DKIM keys
 * are published by a DNS server on loopback, against which the relayed mail is verified.
 */
(available.ok ? describe : describe.skip)('A real Postfix in front of the relay agent', () => {
  let t: TestApp;
  let sink: SmtpSink;
  let dns: TestDnsServer;
  let agentApp: INestApplicationContext;
  let agent: RunningRelayAgent;
  const dkimKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const dkimPrivateKey = dkimKey.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const dkimPublicKey = dkimKey.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');

  /** A paid company in `state` with its owner; its verified sender domain when `domain` is given. */
  async function company(state: Partial<Company>, domain?: string) {
    const owner = await createActiveUser(t);
    const companies = t.dataSource.getRepository(Company);
    const found = await companies.findOneByOrFail({ uuid: owner.companyUuid });
    await companies.update(
      { id: found.id },
      {
        packageUuid: found.uuid,
        periodStart: new Date(),
        periodEnd: new Date(Date.now() + 30 * DAY),
        quota: 100,
        used: 0,
        ...state,
      },
    );
    if (domain) {
      await storeDomain(t, found.id, domain, 'verified', {
        selector: SELECTOR,
        publicKey: dkimPublicKey,
        privateKeyPem: dkimPrivateKey,
      });
      publishSigningDomain(dns, domain, SELECTOR, dkimPublicKey);
    }
    const relayPassword = (
      await t
        .http()
        .post(`/api/v1/companies/${found.uuid}/relay-password`)
        .set(...bearer(owner.accessToken))
        .expect(200)
    ).body.data.relayPassword as string;
    return {
      ...found,
      token: owner.accessToken,
      relayPassword,
      /** swaks options that log in with the company's relay credentials. */
      login: ['--auth', 'PLAIN', '--auth-user', found.relayUsername, '--auth-password', relayPassword],
    };
  }

  const setAllowedIps = (c: { uuid: string; token: string }, ips: string[]) =>
    t
      .http()
      .put(`/api/v1/companies/${c.uuid}/allowed-ips`)
      .set(...bearer(c.token))
      .send({ ips })
      .expect(200);

  /**
   * Waits for the sink to receive the message with this subject (Postfix delivers from its queue),
   * `waitMs` at most. A long in-band run can leave a loopback receive buffer untuned, and 25 MB
   * then crawl into the sink on retransmission timeouts (a kernel effect seen once in CI runs).
   */
  async function relayed(subject: string, waitMs = 30_000): Promise<string[]> {
    const deadline = Date.now() + waitMs;
    while (Date.now() < deadline) {
      const got = sink.mails.filter((m) => m.subject === subject).map((m) => m.to);
      if (got.length) return got;
      flushQueue();
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`Postfix did not relay "${subject}" to the sink`);
  }

  /** The machine's own Postfix before this run: the run must leave it as it was. */
  let machineBefore: ReturnType<typeof machinePostfixState>;

  beforeAll(async () => {
    machineBefore = machinePostfixState();
    sink = await new SmtpSink().start();
    dns = new TestDnsServer();
    await dns.start();
    t = await createTestApp({ env: { LOG_SHIPPER_API_KEY: LOG_SHIPPER_KEY, ENCRYPTION_KEY } });
    agentApp = await relayAgentApplication(t, { ENCRYPTION_KEY });
    agent = await startRelayAgent(agentApp, '127.0.0.1', { policy: 'any', sasl: 'any', milter: 'any' });
    await startPostfix({
      policyPort: agent.ports.policy!,
      saslPort: agent.ports.sasl,
      milterPort: agent.ports.milter,
      relayPort: sink.port,
    });
  }, 60_000);
  afterAll(async () => {
    stopPostfix();
    await agent?.close();
    await agentApp?.close();
    await dns?.stop();
    await t?.close();
    await sink?.stop();
  });

  it('relays for an active company identified by its allowed IP (127.0.0.1/32) and its verified sender domain', async () => {
    const acme = await company({}, 'acme-postfix.test');
    await setAllowedIps(acme, ['127.0.0.1/32']);
    const sent = await swaks('news@acme-postfix.test', 'jo@example.net', 'by allowed IP');
    expect(sent.transcript).toMatch(/<- {2}250 2\.0\.0 Ok: queued as [0-9A-F]+/);
    expect(sent.code).toBe(0);
    expect(await relayed('by allowed IP')).toEqual(['jo@example.net']);
    await setAllowedIps(acme, []);
  }, 60_000);

  it('relays for an active company identified by SMTP AUTH', async () => {
    const beta = await company({}, 'beta-postfix.test');
    const sent = await swaks('news@beta-postfix.test', 'al@example.net', 'by SMTP AUTH', beta.login);
    expect(sent.code).toBe(0);
    expect(await relayed('by SMTP AUTH')).toEqual(['al@example.net']);
  }, 60_000);

  it('refuses a suspended company at RCPT with 554 5.7.1 and the reason', async () => {
    const gamma = await company({ status: 'suspended', suspendedReason: 'abuse' }, 'gamma-postfix.test');
    const sent = await swaks('news@gamma-postfix.test', 'jo@example.net', 'suspended', gamma.login);
    expect(sent.transcript).toContain(
      '554 5.7.1 <jo@example.net>: Recipient address rejected: account suspended',
    );
    expect(sent.code).not.toBe(0);
    expect(sink.mails.filter((m) => m.subject === 'suspended')).toEqual([]);
  }, 60_000);

  it('defers a company over its quota with a 4xx', async () => {
    const delta = await company({ quota: 10, used: 10 }, 'delta-postfix.test');
    const sent = await swaks('news@delta-postfix.test', 'jo@example.net', 'over quota', delta.login);
    expect(sent.transcript).toMatch(
      /450 4\.7\.1 <jo@example\.net>: Recipient address rejected: quota exceeded/,
    );
    expect(sent.code).not.toBe(0);
  }, 60_000);

  it('refuses a client that neither logs in nor comes from an allowed network, whatever its sender', async () => {
    const sent = await swaks('news@nobody-postfix.test', 'jo@example.net', 'unknown');
    expect(sent.transcript).toContain(
      '554 5.7.1 <jo@example.net>: Recipient address rejected: Authentication required',
    );
  }, 60_000);

  it('refuses a suppressed recipient alone (554 5.7.1 with the reason) and relays to the others', async () => {
    const epsilon = await company({}, 'epsilon-postfix.test');
    const suppression = t.dataSource.getRepository(SuppressionEntry);
    await suppression.save([
      suppression.create({
        companyId: epsilon.id,
        email: 'bounced@example.net',
        reason: 'hard_bounce',
        source: 'log',
      }),
      suppression.create({
        companyId: null,
        email: 'trap@example.net',
        reason: 'complaint',
        source: 'admin',
      }),
    ]);
    const sent = await swaks(
      'news@epsilon-postfix.test',
      'bounced@example.net,trap@example.net,kept@example.net',
      'suppressed recipient',
      epsilon.login,
    );
    expect(sent.transcript).toContain(
      '554 5.7.1 <bounced@example.net>: Recipient address rejected: recipient suppressed (hard_bounce)',
    );
    expect(sent.transcript).toContain(
      '554 5.7.1 <trap@example.net>: Recipient address rejected: recipient suppressed (complaint)',
    );
    expect(await relayed('suppressed recipient')).toEqual(['kept@example.net']);
  }, 60_000);

  it('a suspension made through the API refuses the very next message (the policy server is another process)', async () => {
    const admin = await createAdmin(t, 'admin');
    const eta = await company({}, 'eta-postfix.test');
    // Relayed once: the policy server's process now holds the company in its cache.
    expect(
      (await swaks('news@eta-postfix.test', 'jo@example.net', 'before the suspension', eta.login)).code,
    ).toBe(0);
    await t
      .http()
      .patch(`/api/v1/admins/companies/${eta.uuid}`)
      .set(...bearer(admin.accessToken))
      .send({ status: 'suspended', suspendedReason: 'abuse report' })
      .expect(200);
    const sent = await swaks('news@eta-postfix.test', 'jo@example.net', 'after the suspension', eta.login);
    expect(sent.transcript).toContain(
      '554 5.7.1 <jo@example.net>: Recipient address rejected: account suspended',
    );
    expect(await relayed('before the suspension')).toEqual(['jo@example.net']);
    expect(sink.mails.filter((m) => m.subject === 'after the suspension')).toEqual([]);
  }, 60_000);

  it('logs what it did to its own log file (for the log shipper)', () => {
    const log = readFileSync(postfixLogFile(), 'utf8');
    expect(log).toMatch(
      /postfix\/smtp\[\d+\]: [0-9A-F]+: to=<jo@example\.net>, relay=127\.0\.0\.1\[127\.0\.0\.1\]:\d+, .*status=sent/,
    );
    expect(log).toMatch(
      /NOQUEUE: reject: RCPT from .*: 554 5\.7\.1 <jo@example\.net>: Recipient address rejected: account suspended/,
    );
  });

  describe("Postfix's own log, shipped to the service (issue 10)", () => {
    // A domain of this run only: the log file keeps earlier runs' lines, which must not count here.
    const domain = `zeta-${Date.now().toString(36)}.test`;
    const today = () => new Date().toISOString().slice(0, 10);
    let zeta: Awaited<ReturnType<typeof company>>;

    const shipLog = () =>
      t
        .http()
        .post('/api/v1/callback-raw-log')
        .set('x-api-key', LOG_SHIPPER_KEY)
        .set('content-type', 'text/plain')
        .send(readFileSync(postfixLogFile(), 'utf8'))
        .expect(200);
    const recordOf = async (recipient: string) => {
      const res = await t
        .http()
        .get(`/api/v1/reports/logs?from=${today()}&to=${today()}&recipient=${recipient}`)
        .set(...bearer(zeta.token))
        .expect(200);
      return res.body.data.items as Array<Record<string, unknown>>;
    };
    /** Waits until Postfix has logged a line matching `pattern`. */
    async function logged(pattern: RegExp): Promise<RegExpExecArray> {
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        const found = pattern.exec(readFileSync(postfixLogFile(), 'utf8'));
        if (found) return found;
        flushQueue();
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error(`Postfix did not log ${pattern}`);
    }

    beforeAll(async () => {
      zeta = await company({}, domain);
    });

    it('a relayed message becomes a sent record with its Message-ID and queue id, counted once', async () => {
      const sent = await swaks(`news@${domain}`, 'ok@example.net', 'shipped log', zeta.login);
      const queueId = /queued as ([0-9A-F]+)/.exec(sent.transcript)![1];
      expect(await relayed('shipped log')).toEqual(['ok@example.net']);
      await logged(new RegExp(`${queueId}: to=<ok@example\\.net>.*status=sent`));
      const messageId = (await logged(new RegExp(`${queueId}: message-id=<([^>]+)>`)))[1];

      const shipped = await shipLog();
      expect(shipped.body.data.records).toBeGreaterThanOrEqual(1);
      const [record] = await recordOf('ok@example.net');
      expect(record).toMatchObject({
        status: 'sent',
        queueId,
        messageId,
        from: `news@${domain}`,
        companyUuid: zeta.uuid,
        dsn: '2.0.0',
      });
      const used = async () =>
        (await t.dataSource.getRepository(Company).findOneByOrFail({ id: zeta.id })).used;
      expect(await used()).toBe(1);
      // The whole file again: nothing new, nothing counted twice.
      expect((await shipLog()).body.data.records).toBe(0);
      expect(await used()).toBe(1);
    }, 60_000);

    it('a recipient the next hop refuses with 550 becomes bounced and suppressed', async () => {
      sink.refused.add('gone@example.net');
      const sent = await swaks(`news@${domain}`, 'gone@example.net', 'refused by the sink', zeta.login);
      const queueId = /queued as ([0-9A-F]+)/.exec(sent.transcript)![1];
      await logged(new RegExp(`${queueId}: to=<gone@example\\.net>.*dsn=5\\.1\\.1, status=bounced`));
      await shipLog();
      const [record] = await recordOf('gone@example.net');
      expect(record).toMatchObject({ status: 'bounced', queueId, dsn: '5.1.1', companyUuid: zeta.uuid });
      expect(String(record.response)).toContain('550 5.1.1 No such user here');
      const entry = await t.dataSource
        .getRepository(SuppressionEntry)
        .findOneByOrFail({ companyId: zeta.id, email: 'gone@example.net' });
      expect(entry).toMatchObject({ reason: 'hard_bounce', source: 'log' });
      expect((await t.dataSource.getRepository(Company).findOneByOrFail({ id: zeta.id })).used).toBe(2);
    }, 60_000);

    it('a sasl_username forged in MAIL FROM, logged by a QID reject line, charges the sender and nobody else', async () => {
      const victim = await company({});
      const theta = await company({}, `theta-${domain}`);
      const forged = `"a>, client=h[1.2.3.4], sasl_username=${victim.relayUsername}, b="@theta-${domain}`;
      // Theta's own server: identified by its network, not by a login.
      await setAllowedIps(theta, ['127.0.0.1/32']);
      // The second recipient is refused by Postfix itself (reject_non_fqdn_recipient) after the
      // first opened the queue file: Postfix logs `QID: reject: RCPT …; from=<forged> to=<…>`.
      const sent = await swaks(forged, 'paid@example.net,bad@nowhere', 'forged sender');
      expect(sent.transcript).toMatch(/504 5\.5\.2 <bad@nowhere>: Recipient address rejected/);
      const queueId = /queued as ([0-9A-F]+)/.exec(sent.transcript)![1];
      await logged(new RegExp(`${queueId}: reject: RCPT from .*sasl_username=${victim.relayUsername}`));
      // The next hop (smtp-server) refuses that MAIL FROM's syntax: Postfix bounces the message,
      // which counts against the quota as a delivery would.
      await logged(new RegExp(`${queueId}: to=<paid@example\\.net>.*status=bounced`));

      await shipLog();
      const companies = t.dataSource.getRepository(Company);
      expect((await companies.findOneByOrFail({ id: victim.id })).used).toBe(0);
      expect((await companies.findOneByOrFail({ id: theta.id })).used).toBe(1);
      const records = await t.dataSource.getRepository(CleanLog).findBy({ queueId });
      expect(records.map((r) => [r.to, r.status, r.companyId, r.saslUsername]).sort()).toEqual([
        ['bad@nowhere', 'rejected', theta.id, null],
        ['paid@example.net', 'bounced', theta.id, null],
      ]);
      await setAllowedIps(theta, []);
    }, 60_000);
  });
  describe('The relay agent: SMTP AUTH, DKIM signing and From alignment (issue 20)', () => {
    // Domains of this run only: the log file and the DNS zone outlive one test.
    const domain = `iota-${Date.now().toString(36)}.test`;
    const otherDomain = `kappa-${Date.now().toString(36)}.test`;
    let iota: Awaited<ReturnType<typeof company>>;
    let kappa: Awaited<ReturnType<typeof company>>;
    let password: string;
    const resolver = new Resolver();

    const newPassword = async (c: { uuid: string; token: string }) =>
      (
        await t
          .http()
          .post(`/api/v1/companies/${c.uuid}/relay-password`)
          .set(...bearer(c.token))
          .expect(200)
      ).body.data.relayPassword as string;
    const auth = (mechanism: 'PLAIN' | 'LOGIN', user: string, secret: string) => [
      '--auth',
      mechanism,
      '--auth-user',
      user,
      '--auth-password',
      secret,
    ];
    const mailOf = (subject: string) => sink.mails.find((m) => m.subject === subject)!;

    /** mailauth's verdicts for a relayed message, its keys looked up in the test DNS server. */
    async function verdicts(raw: Buffer, sender: string) {
      const result = await authenticate(raw, {
        ip: '127.0.0.1',
        helo: 'relay.test',
        mta: 'mx.example.net',
        sender,
        resolver: (name: string, type: string) => resolver.resolve(name, type) as Promise<string[][]>,
        disableArc: true,
        disableBimi: true,
      });
      return {
        dkim: result.dkim.results.map((r) => ({
          domain: r.signingDomain,
          selector: r.selector,
          result: r.status.result,
          aligned: r.status.aligned,
        })),
        dmarc: result.dmarc && result.dmarc.status.result,
      };
    }

    beforeAll(async () => {
      resolver.setServers([dns.address]);
      iota = await company({}, domain);
      kappa = await company({}, otherDomain);
      password = await newPassword(iota);
    });

    it('AUTH PLAIN with the relay credentials: 235, relayed, DKIM-signed with the domain key, aligned, DMARC p=reject passes', async () => {
      const sent = await swaks(
        `news@${domain}`,
        'jo@example.net',
        'auth plain',
        auth('PLAIN', iota.relayUsername, password),
      );
      expect(sent.transcript).toContain('235 2.7.0 Authentication successful');
      expect(sent.code).toBe(0);
      expect(await relayed('auth plain')).toEqual(['jo@example.net']);
      const raw = mailOf('auth plain').raw;
      expect(raw.toString('latin1')).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=/);
      expect(await verdicts(raw, `news@${domain}`)).toEqual({
        dkim: [{ domain, selector: SELECTOR, result: 'pass', aligned: domain }],
        dmarc: 'pass',
      });
    }, 60_000);

    it('AUTH LOGIN with an upper-case username: 235 and relayed', async () => {
      const sent = await swaks(
        `news@${domain}`,
        'al@example.net',
        'auth login',
        auth('LOGIN', iota.relayUsername.toUpperCase(), password),
      );
      expect(sent.transcript).toContain('235 2.7.0 Authentication successful');
      expect(await relayed('auth login')).toEqual(['al@example.net']);
    }, 60_000);

    it('a wrong password: 535 and nothing relayed', async () => {
      const sent = await swaks(
        `news@${domain}`,
        'jo@example.net',
        'wrong password',
        auth('PLAIN', iota.relayUsername, `${password}x`),
      );
      expect(sent.transcript).toContain('535 5.7.8 Error: authentication failed');
      expect(sent.code).not.toBe(0);
      expect(sink.mails.filter((m) => m.subject === 'wrong password')).toEqual([]);
    }, 60_000);

    it("a From: of another company's domain: 550 5.7.1 at the end of DATA, nothing relayed", async () => {
      const sent = await swaks(`news@${domain}`, 'jo@example.net', 'spoofed from', [
        ...auth('PLAIN', iota.relayUsername, password),
        '--header',
        `From: CEO <ceo@${otherDomain}>`,
      ]);
      expect(sent.transcript).toContain(
        `550 5.7.1 From domain ${otherDomain} is not verified for this account`,
      );
      expect(sent.code).not.toBe(0);
      expect(sink.mails.filter((m) => m.subject === 'spoofed from')).toEqual([]);
    }, 60_000);

    it('after a password rotation the old password fails at once and the new one works', async () => {
      const rotated = await newPassword(iota);
      const old = await swaks(
        `news@${domain}`,
        'jo@example.net',
        'old password',
        auth('PLAIN', iota.relayUsername, password),
      );
      expect(old.transcript).toContain('535 5.7.8 Error: authentication failed');
      password = rotated;
      const fresh = await swaks(
        `news@${domain}`,
        'jo@example.net',
        'new password',
        auth('PLAIN', iota.relayUsername, password),
      );
      expect(fresh.transcript).toContain('235 2.7.0 Authentication successful');
      expect(await relayed('new password')).toEqual(['jo@example.net']);
    }, 60_000);

    it('an 8-bit body and a 25 MB message still verify', async () => {
      const eightBit = await swaks(`news@${domain}`, 'jo@example.net', '8-bit body', [
        ...auth('PLAIN', iota.relayUsername, password),
        '--body',
        'Grüße aus München – ½ € ✓\nZweite Zeile.',
      ]);
      expect(eightBit.code).toBe(0);
      await relayed('8-bit body');
      expect(mailOf('8-bit body').raw.toString('utf8')).toContain('Grüße aus München');
      expect((await verdicts(mailOf('8-bit body').raw, `news@${domain}`)).dkim).toEqual([
        { domain, selector: SELECTOR, result: 'pass', aligned: domain },
      ]);

      const file = join(tmpdir(), `relay-25mb-${process.pid}.txt`);
      const line = `${'0123456789abcdefghijklmnopqrstuvwxyz'.repeat(2)}\n`;
      writeFileSync(file, line.repeat(Math.ceil((25 * 1024 * 1024) / line.length)));
      const large = await swaks(`news@${domain}`, 'jo@example.net', '25 MB message', [
        ...auth('PLAIN', iota.relayUsername, password),
        '--body',
        `@${file}`,
      ]);
      expect(large.code).toBe(0);
      await relayed('25 MB message', 200_000);
      const raw = mailOf('25 MB message').raw;
      expect(raw.length).toBeGreaterThan(25 * 1024 * 1024);
      expect((await verdicts(raw, `news@${domain}`)).dkim).toEqual([
        { domain, selector: SELECTOR, result: 'pass', aligned: domain },
      ]);
    }, 300_000);

    describe('who may relay and whose key signs (issue 29)', () => {
      const refusedAt = (subject: string) => sink.mails.filter((m) => m.subject === subject);
      const login = () => auth('PLAIN', iota.relayUsername, password);

      it("no login from an address in nobody's networks: 554 Authentication required at RCPT, whatever sender and From", async () => {
        const sent = await swaks(`x@${domain}`, 'jo@example.net', 'no login', [
          '--local-interface',
          '127.0.0.5',
          '--header',
          `From: ceo@${otherDomain}`,
        ]);
        expect(sent.transcript).toContain(
          '554 5.7.1 <jo@example.net>: Recipient address rejected: Authentication required',
        );
        expect(sent.code).not.toBe(0);
        expect(refusedAt('no login')).toEqual([]);
      }, 60_000);

      it('a session whose AUTH failed with 535 and goes on is refused the same way', async () => {
        const sent = await swaks(`x@${domain}`, 'jo@example.net', 'failed login goes on', [
          ...auth('PLAIN', iota.relayUsername, `${password}-wrong`),
          '--auth-optional',
          '--local-interface',
          '127.0.0.5',
        ]);
        expect(sent.transcript).toContain('535 5.7.8 Error: authentication failed');
        expect(sent.transcript).toContain(
          '554 5.7.1 <jo@example.net>: Recipient address rejected: Authentication required',
        );
        expect(refusedAt('failed login goes on')).toEqual([]);
      }, 60_000);

      it("a shared network: the envelope sender picks the company, and only that company's From domain is signed", async () => {
        await setAllowedIps(iota, ['127.0.0.6/32']);
        await setAllowedIps(kappa, ['127.0.0.6/32']);
        try {
          const own = await swaks(`news@${otherDomain}`, 'jo@example.net', 'shared network own', [
            '--local-interface',
            '127.0.0.6',
            '--header',
            `From: news@${otherDomain}`,
          ]);
          expect(own.code).toBe(0);
          await relayed('shared network own');
          expect((await verdicts(mailOf('shared network own').raw, `news@${otherDomain}`)).dkim).toEqual([
            { domain: otherDomain, selector: SELECTOR, result: 'pass', aligned: otherDomain },
          ]);
          // Iota's envelope, Kappa's From: Iota is authorised, and Kappa's key must not sign.
          const spoof = await swaks(`news@${domain}`, 'jo@example.net', 'shared network spoof', [
            '--local-interface',
            '127.0.0.6',
            '--header',
            `From: CEO <ceo@${otherDomain}>`,
          ]);
          expect(spoof.transcript).toContain(
            `550 5.7.1 From domain ${otherDomain} is not verified for this account`,
          );
          expect(refusedAt('shared network spoof')).toEqual([]);
        } finally {
          await setAllowedIps(iota, []);
          await setAllowedIps(kappa, []);
        }
      }, 60_000);

      it("the null sender is judged like any client's mail: another company's From refused, its own signed", async () => {
        const foreign = await swaks('<>', 'jo@example.net', 'null sender foreign', [
          ...login(),
          '--header',
          `From: ceo@${otherDomain}`,
        ]);
        expect(foreign.transcript).toContain('MAIL FROM:<>');
        expect(foreign.transcript).toContain(
          `550 5.7.1 From domain ${otherDomain} is not verified for this account`,
        );
        expect(refusedAt('null sender foreign')).toEqual([]);
        const own = await swaks('<>', 'jo@example.net', 'null sender own', [
          ...login(),
          '--header',
          `From: postmaster@${domain}`,
        ]);
        expect(own.code).toBe(0);
        await relayed('null sender own');
        expect((await verdicts(mailOf('null sender own').raw, '')).dkim).toEqual([
          { domain, selector: SELECTOR, result: 'pass', aligned: domain },
        ]);
      }, 60_000);

      it.each([
        [`"ceo@${otherDomain}" <news@DOMAIN>`, '550 5.7.1 From display name names another address'],
        [
          `=?utf-8?B?${Buffer.from(`ceo@${otherDomain}`).toString('base64')}?= <news@DOMAIN>`,
          '550 5.7.1 From display name names another address',
        ],
        ['team: news@DOMAIN;', '550 5.6.0 From header is a group, not a mailbox'],
        [`"ceo@${otherDomain}"@DOMAIN`, '550 5.6.0 From address has a quoted local part holding @'],
      ])(
        'From: %s is refused: %s',
        async (from, reply) => {
          const subject = `from form ${from}`;
          const sent = await swaks(`news@${domain}`, 'jo@example.net', subject, [
            ...login(),
            '--header',
            `From: ${from.replace('DOMAIN', domain)}`,
          ]);
          expect(sent.transcript).toContain(reply);
          expect(sent.code).not.toBe(0);
          expect(refusedAt(subject)).toEqual([]);
        },
        60_000,
      );
    });
  });

  it("leaves the machine's own Postfix alone: its main.cf, master.cf, queue and state as before the run", () => {
    expect(machinePostfixState()).toEqual(machineBefore);
  });
});
