import { INestApplicationContext } from '@nestjs/common';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { authenticate } from 'mailauth';
import { simpleParser } from 'mailparser';
import { Company } from '../src/modules/companies/entities/company.entity';
import { Email } from '../src/modules/emails/entities/email.entity';
import { CleanLog } from '../src/modules/log-index/entities/clean-log.entity';
import { SuppressionEntry } from '../src/modules/suppression/entities/suppression-entry.entity';
import { RunningRelayAgent, startRelayAgent } from '../src/relay-agent/relay-agent';
import { publishSigningDomain, TestDnsServer } from './support/dns-server';
import { bearer, createActiveUser, storeDomain } from './support/factories';
import {
  machinePostfixState,
  pausePostfix,
  postfixAvailable,
  postfixLogFile,
  postfixPort,
  resumePostfix,
  startPostfix,
  stopPostfix,
} from './support/postfix';
import { relayAgentApplication } from './support/relay-agent-app';
import { ReceivedMail, SmtpSink } from './support/smtp-sink';
import { createTestApp, FreshDatabase, freshDatabase, TestApp } from './support/test-app';
import { until } from './support/until';

const available = postfixAvailable();
const DAY = 86_400_000;
const LOG_SHIPPER_KEY = 'log-shipper-key-for-the-postfix-send-test-0123';
/** The API and the relay agent share both: the agent decrypts the DKIM keys and checks the tokens the API makes. */
const ENCRYPTION_KEY = randomBytes(32).toString('base64');
const RELAY_SUBMIT_SECRET = `relay-submit-secret-${randomBytes(16).toString('hex')}`;
const SELECTOR = 'rs202611';
/** Long enough for the worker, Postfix, the milter and the sink, on a loaded CI machine. */
const ARRIVES_MS = 30_000;
/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
if (!available.ok) {
  // CI installs Postfix and swaks (.ci/run): there, a missing one is a failure, not a skip.
  if (process.env.CI) throw new Error(`The real-Postfix sending test cannot run in CI: ${available.why}`);
  console.warn(`Skipping the real-Postfix sending test: ${available.why}`);
}

/**
 * Sending by HTTP through a stock Postfix (platform.md "Sending by HTTP"): POST /api/v1/emails
 * stores the message, the service's submission worker hands it to a private Postfix instance on
 * its smtpd port (RELAY_SUBMIT_URL) with SMTP AUTH as the company's relay username and a
 * submission token, which the relay agent's SASL listener accepts (the same RELAY_SUBMIT_SECRET
 * on both). The agent (its own application on the API's database, as production runs it) decides
 * by policy and signs by milter; Postfix relays to a loopback SMTP sink, where mailauth verifies
 * the signature against a DNS server on loopback. Postfix's own log, shipped to the service,
 * makes the clean records that `GET /api/v1/emails/:id` reads.
 */
(available.ok ? describe : describe.skip)('Sending by HTTP through a real Postfix', () => {
  let t: TestApp;
  let sink: SmtpSink;
  let dns: TestDnsServer;
  let agentApp: INestApplicationContext;
  let agent: RunningRelayAgent;
  let database: FreshDatabase;
  const resolver = new Resolver();
  const dkimKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const dkimPrivateKey = dkimKey.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const dkimPublicKey = dkimKey.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  /** A suffix of this run: the log file and the DNS zone outlive one test. */
  const run = Date.now().toString(36);
  let machineBefore: ReturnType<typeof machinePostfixState>;

  type Sender = Awaited<ReturnType<typeof company>>;

  /**
   * A paid company in `state` (quota 100, none used) with its owner, a verified signing domain
   * (its DKIM key published), and a `sending` API key its owner made.
   */
  async function company(name: string, state: Partial<Company> = {}) {
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
    const domain = `${name}-${run}.test`;
    await storeDomain(t, found.id, domain, 'verified', {
      selector: SELECTOR,
      publicKey: dkimPublicKey,
      privateKeyPem: dkimPrivateKey,
    });
    publishSigningDomain(dns, domain, SELECTOR, dkimPublicKey);
    // Its SPF record too: mailauth asks for it, and the test DNS server's NXDOMAIN reaches Node's
    // resolver as a timeout (about 24 s of retries a check).
    dns.zone.set(domain, { txt: [['v=spf1 ip4:127.0.0.0/8 -all']] });
    const key = (
      await t
        .http()
        .post('/api/v1/api-keys')
        .set(...bearer(owner.accessToken))
        .send({ name: 'sending test', scope: 'sending' })
        .expect(201)
    ).body.data.key as string;
    return { id: found.id, uuid: found.uuid, relayUsername: found.relayUsername, domain, key };
  }

  /** POST /api/v1/emails with the company's `sending` key. */
  const send = (c: Sender, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t
      .http()
      .post('/api/v1/emails')
      .set(...bearer(c.key))
      .set(headers)
      .send({ from: `News <news@${c.domain}>`, text: 'Hello from the HTTP sending test.', ...body });

  const view = async (c: Sender, id: string) =>
    (
      await t
        .http()
        .get(`/api/v1/emails/${id}`)
        .set(...bearer(c.key))
        .expect(200)
    ).body.data as {
      status: string;
      queueId: string | null;
      lastError: string | null;
      messageId: string;
      recipients: Array<{ email: string; status: string; dsn: string | null; response: string | null }>;
    };

  const emailRow = (id: string) => t.dataSource.getRepository(Email).findOneByOrFail({ uuid: id });
  const arrivedWith = (subject: string) => sink.mails.filter((m) => m.subject === subject);

  /** Waits for the sink to hold the message with this subject, for `count` recipients. */
  async function arrived(subject: string, count = 1): Promise<ReceivedMail[]> {
    await until(() => arrivedWith(subject).length >= count, `"${subject}" reached the sink`, ARRIVES_MS);
    return arrivedWith(subject);
  }

  /** Waits until the worker recorded the relay's answer for the message: `submitted`, with its queue id. */
  async function submitted(id: string): Promise<Email> {
    let row: Email | undefined;
    await until(
      async () => (row = await emailRow(id)).status !== 'queued',
      `message ${id} left the queue`,
      ARRIVES_MS,
    ).catch((e: Error) => {
      throw new Error(`${e.message}: ${JSON.stringify(row)}`);
    });
    expect(row).toMatchObject({ status: 'submitted', lastError: null });
    return row!;
  }

  /** Waits until Postfix has logged a line matching `pattern`. */
  async function logged(pattern: RegExp): Promise<RegExpExecArray> {
    let found: RegExpExecArray | null = null;
    await until(
      () => (found = pattern.exec(readFileSync(postfixLogFile(), 'utf8'))) !== null,
      `Postfix logged ${pattern}`,
      ARRIVES_MS,
    );
    return found!;
  }

  /** Postfix's log as it is, posted as the log shipper posts it. */
  const shipLog = () =>
    t
      .http()
      .post('/api/v1/callback-raw-log')
      .set('x-api-key', LOG_SHIPPER_KEY)
      .set('content-type', 'text/plain')
      .send(readFileSync(postfixLogFile(), 'utf8'))
      .expect(200);

  /** mailauth's DKIM verdicts for a relayed message, its keys looked up in the test DNS server. */
  async function dkim(raw: Buffer, sender: string) {
    const result = await authenticate(raw, {
      ip: '127.0.0.1',
      helo: 'relay.test',
      mta: 'mx.example.net',
      sender,
      resolver: (name: string, type: string) => resolver.resolve(name, type) as Promise<string[][]>,
      disableArc: true,
      disableBimi: true,
    });
    return result.dkim.results.map((r) => ({
      domain: r.signingDomain,
      selector: r.selector,
      result: r.status.result,
      aligned: r.status.aligned,
    }));
  }

  const used = async (c: Sender) =>
    (await t.dataSource.getRepository(Company).findOneByOrFail({ id: c.id })).used;

  beforeAll(async () => {
    machineBefore = machinePostfixState();
    sink = await new SmtpSink().start();
    dns = new TestDnsServer();
    await dns.start();
    resolver.setServers([dns.address]);
    // The agent listens before Postfix starts: smtpd connects to its milter and SASL listeners at
    // every connection (startPostfix's own port check included), and one refused makes Postfix's
    // master throttle smtpd for a minute. The API's RELAY_SUBMIT_URL names Postfix's port, so the
    // API boots once first on the database (migrations, the agent's database), then again with it.
    database = await freshDatabase();
    const first = await createTestApp({ database });
    agentApp = await relayAgentApplication(first, { ENCRYPTION_KEY, RELAY_SUBMIT_SECRET });
    agent = await startRelayAgent(agentApp, '127.0.0.1', { policy: 'any', sasl: 'any', milter: 'any' });
    await first.close();
    await startPostfix({
      policyPort: agent.ports.policy!,
      saslPort: agent.ports.sasl,
      milterPort: agent.ports.milter,
      relayPort: sink.port,
    });
    t = await createTestApp({
      database,
      env: {
        LOG_SHIPPER_API_KEY: LOG_SHIPPER_KEY,
        ENCRYPTION_KEY,
        RELAY_SUBMIT_URL: `smtp://127.0.0.1:${postfixPort()}`,
        RELAY_SUBMIT_SECRET,
      },
    });
  }, 60_000);

  afterAll(async () => {
    // The API first: its worker's connections to Postfix close before Postfix goes.
    await t?.close();
    stopPostfix();
    await agent?.close();
    await agentApp?.close();
    await database?.drop();
    await dns?.stop();
    await sink?.stop();
  });

  describe('a message sent with a `sending` API key, one recipient suppressed', () => {
    let acme: Sender;
    const subject = `order ${run}`;
    let answer: {
      id: string;
      messageId: string;
      status: string;
      accepted: string[];
      rejected: Array<{ email: string; reason: string }>;
    };

    beforeAll(async () => {
      acme = await company('acme');
      const suppression = t.dataSource.getRepository(SuppressionEntry);
      await suppression.save(
        suppression.create({
          companyId: acme.id,
          email: 'gone@example.net',
          reason: 'hard_bounce',
          source: 'log',
        }),
      );
      const res = await send(acme, {
        to: ['ana@example.net', 'Gone <gone@example.net>'],
        cc: ['bo@example.net'],
        subject,
      }).expect(202);
      answer = res.body.data;
    }, 60_000);

    it('is answered 202 with its id, its Message-ID, and the suppressed recipient in `rejected` with the reason', () => {
      expect(answer).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        messageId: `<${answer.id}@${acme.domain}>`,
        status: 'queued',
        accepted: ['ana@example.net', 'bo@example.net'],
        rejected: [{ email: 'gone@example.net', reason: 'suppressed (hard_bounce)' }],
      });
    });

    it("reaches the sink through Postfix, DKIM-signed by the company's domain, with the Message-ID of the answer", async () => {
      const mails = await arrived(subject, 2);
      expect(mails.map((m) => m.to).sort()).toEqual(['ana@example.net', 'bo@example.net']);
      const raw = mails[0].raw;
      const parsed = await simpleParser(raw);
      expect(parsed.messageId).toBe(answer.messageId);
      expect(parsed.from?.value).toEqual([{ name: 'News', address: `news@${acme.domain}` }]);
      expect(raw.toString('latin1')).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=/);
      expect(await dkim(raw, `news@${acme.domain}`)).toEqual([
        { domain: acme.domain, selector: SELECTOR, result: 'pass', aligned: acme.domain },
      ]);
    }, 60_000);

    it('never hands the suppressed recipient to Postfix: the sink had the message for the others only', async () => {
      // The one transaction Postfix made to the sink carried every recipient it was given.
      await arrived(subject, 2);
      expect(sink.mails.filter((m) => m.to === 'gone@example.net')).toEqual([]);
      expect(readFileSync(postfixLogFile(), 'utf8')).not.toContain('to=<gone@example.net>');
    }, 60_000);

    it("Postfix's log, shipped, makes the company's clean records with its emailId; GET shows Postfix's queue id and each recipient sent; one counted per recipient", async () => {
      const row = await submitted(answer.id);
      expect(row.queueId).toMatch(/^[0-9A-F]+$/);
      const queueId = row.queueId!;
      // The queue id the service kept is the one Postfix logged the message under.
      expect((await logged(new RegExp(`${queueId}: message-id=<([^>]+)>`)))[1]).toBe(
        answer.messageId.slice(1, -1),
      );
      const client = await logged(new RegExp(`${queueId}: client=.*sasl_username=(\\S+)`));
      expect(client[1]).toBe(acme.relayUsername);
      for (const to of ['ana@example.net', 'bo@example.net'])
        await logged(new RegExp(`${queueId}: to=<${to.replace(/\./g, '\\.')}>.*status=sent`));
      expect(await used(acme)).toBe(0);

      expect((await shipLog()).body.data.records).toBeGreaterThanOrEqual(2);
      const records = await t.dataSource.getRepository(CleanLog).findBy({ queueId });
      expect(
        records.map((r) => ({
          to: r.to,
          status: r.status,
          companyId: r.companyId,
          emailId: r.emailId,
          messageId: r.messageId,
        })),
      ).toEqual(
        expect.arrayContaining(
          ['ana@example.net', 'bo@example.net'].map((to) => ({
            to,
            status: 'sent',
            companyId: acme.id,
            emailId: answer.id,
            messageId: answer.messageId.slice(1, -1),
          })),
        ),
      );
      expect(records).toHaveLength(2);

      const seen = await view(acme, answer.id);
      expect(seen).toMatchObject({ status: 'submitted', queueId, messageId: answer.messageId });
      expect(
        seen.recipients
          .map((r) => ({ email: r.email, status: r.status, dsn: r.dsn }))
          .sort((a, b) => a.email.localeCompare(b.email)),
      ).toEqual([
        { email: 'ana@example.net', status: 'sent', dsn: '2.0.0' },
        { email: 'bo@example.net', status: 'sent', dsn: '2.0.0' },
        { email: 'gone@example.net', status: 'rejected', dsn: null },
      ]);
      expect(seen.recipients.find((r) => r.email === 'gone@example.net')!.response).toBe(
        'suppressed (hard_bounce)',
      );
      // Two recipients accepted, two counted; the whole log again counts nothing twice.
      expect(await used(acme)).toBe(2);
      await shipLog();
      expect(await used(acme)).toBe(2);
    }, 60_000);
  });

  it('the same Idempotency-Key twice: the first answer again (200), one message stored, one at the sink', async () => {
    const beta = await company('beta');
    const subject = `idempotent ${run}`;
    const body = { to: 'jo@example.net', subject };
    const key = `order-42-${run}`;
    const first = await send(beta, body, { 'idempotency-key': key }).expect(202);
    const again = await send(beta, body, { 'idempotency-key': key }).expect(200);
    expect(again.body.data).toEqual(first.body.data);
    expect(await t.dataSource.getRepository(Email).countBy({ companyId: beta.id })).toBe(1);

    await arrived(subject);
    await submitted(first.body.data.id);
    // A message sent after it arrives after it: by then a second copy would have come too.
    const marker = `after the idempotent one ${run}`;
    const next = await send(beta, { to: 'jo@example.net', subject: marker }).expect(202);
    await submitted(next.body.data.id);
    await arrived(marker);
    expect(arrivedWith(subject)).toHaveLength(1);
  }, 60_000);

  it('the relay stopped: the message waits with the reason; once Postfix is back and the message due, it is delivered once', async () => {
    const gamma = await company('gamma');
    const subject = `while the relay was down ${run}`;
    await pausePostfix();
    let id: string;
    try {
      id = (await send(gamma, { to: 'jo@example.net', subject }).expect(202)).body.data.id as string;
      // The worker tried, found no relay, and put it back for later (1 minute).
      await until(async () => (await emailRow(id)).attempts >= 1, 'the worker tried the message', ARRIVES_MS);
      const waiting = await emailRow(id);
      expect(waiting).toMatchObject({ status: 'queued', attempts: 1, queueId: null });
      expect(waiting.lastError).toBeTruthy();
      // Put back for a minute from the failed attempt (platform.md: 1 min, doubling).
      expect(waiting.nextAttemptAt!.getTime()).toBeGreaterThanOrEqual(waiting.createdAt.getTime() + 60_000);
      const seen = await view(gamma, id);
      expect(seen).toMatchObject({ status: 'queued', queueId: null, lastError: waiting.lastError });
      expect(seen.recipients).toEqual([
        expect.objectContaining({ email: 'jo@example.net', status: 'queued' }),
      ]);
      expect(arrivedWith(subject)).toEqual([]);
    } finally {
      await resumePostfix();
    }
    await t.dataSource.getRepository(Email).update({ uuid: id }, { nextAttemptAt: new Date() });
    const row = await submitted(id);
    expect(row.attempts).toBe(2);
    await arrived(subject);
    // A message sent after it arrives after it: by then a second copy would have come too.
    const marker = `after the relay came back ${run}`;
    const next = await send(gamma, { to: 'jo@example.net', subject: marker }).expect(202);
    await submitted(next.body.data.id);
    await arrived(marker);
    expect(arrivedWith(subject)).toHaveLength(1);
  }, 90_000);

  it('a from domain the company has not verified: 422, nothing stored', async () => {
    const delta = await company('delta');
    await storeDomain(t, delta.id, `pending-${delta.domain}`, 'pending');
    for (const from of [`news@pending-${delta.domain}`, `news@nobody-${run}.test`]) {
      const res = await send(delta, { from, to: 'jo@example.net', subject: 'unverified' }).expect(422);
      expect(res.body.msg).toBe('Sender domain not verified');
    }
    expect(await t.dataSource.getRepository(Email).countBy({ companyId: delta.id })).toBe(0);
  }, 60_000);

  it('a suspended company: 403, nothing stored', async () => {
    const epsilon = await company('epsilon', { status: 'suspended', suspendedReason: 'abuse' });
    const res = await send(epsilon, { to: 'jo@example.net', subject: 'suspended' }).expect(403);
    expect(res.body.msg).toBe('Company suspended');
    expect(await t.dataSource.getRepository(Email).countBy({ companyId: epsilon.id })).toBe(0);
  }, 60_000);

  it('attachments and an inline image arrive intact, and the signature still verifies', async () => {
    const zeta = await company('zeta');
    const subject = `with attachments ${run}`;
    const binary = randomBytes(48 * 1024);
    const text = Buffer.from('Grüße aus München – ½ € ✓\nZweite Zeile.\n', 'utf8');
    const res = await send(zeta, {
      to: 'jo@example.net',
      subject,
      text: 'See the attachments.',
      html: '<p>Our logo: <img src="cid:logo@zeta"></p>',
      attachments: [
        {
          filename: 'report.bin',
          content: binary.toString('base64'),
          contentType: 'application/octet-stream',
        },
        { filename: 'grüße.txt', content: text.toString('base64'), contentType: 'text/plain' },
        {
          filename: 'logo.png',
          content: PNG.toString('base64'),
          contentType: 'image/png',
          contentId: 'logo@zeta',
        },
      ],
    }).expect(202);
    const [mail] = await arrived(subject);
    // skipImageLinks: the HTML as it came, `cid:` references not turned into data: URLs.
    const parsed = await simpleParser(mail.raw, { skipImageLinks: true });
    expect(parsed.messageId).toBe(res.body.data.messageId);
    expect(parsed.text?.trim()).toBe('See the attachments.');
    expect(parsed.html).toContain('cid:logo@zeta');
    const parts = parsed.attachments.map((a) => ({
      filename: a.filename,
      contentType: a.contentType,
      disposition: a.contentDisposition,
      cid: a.cid ?? null,
      content: a.content.toString('base64'),
    }));
    expect(parts).toEqual(
      expect.arrayContaining([
        {
          filename: 'report.bin',
          contentType: 'application/octet-stream',
          disposition: 'attachment',
          cid: null,
          content: binary.toString('base64'),
        },
        {
          filename: 'grüße.txt',
          contentType: 'text/plain',
          disposition: 'attachment',
          cid: null,
          content: text.toString('base64'),
        },
        {
          filename: 'logo.png',
          contentType: 'image/png',
          disposition: 'inline',
          cid: 'logo@zeta',
          content: PNG.toString('base64'),
        },
      ]),
    );
    expect(parts).toHaveLength(3);
    expect(await dkim(mail.raw, `news@${zeta.domain}`)).toEqual([
      { domain: zeta.domain, selector: SELECTOR, result: 'pass', aligned: zeta.domain },
    ]);
  }, 60_000);

  it("leaves the machine's own Postfix alone: its main.cf, master.cf, queue and state as before the run", () => {
    expect(machinePostfixState()).toEqual(machineBefore);
  });
});
