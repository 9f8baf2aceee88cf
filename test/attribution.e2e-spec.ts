import fc from 'fast-check';
import { connect } from 'node:net';
import { Repository } from 'typeorm';
import { CompanyStateEvents } from '../src/modules/companies/company-state-events';
import { Company } from '../src/modules/companies/entities/company.entity';
import { DomainEvents } from '../src/modules/domains/domain-events';
import { Domain } from '../src/modules/domains/entities/domain.entity';
import { RelayDecisionService } from '../src/modules/internal/relay-decision.service';
import { PostfixQueue } from '../src/modules/delivery/entities/postfix-queue.entity';
import { CleanLog } from '../src/modules/log-index/entities/clean-log.entity';
import { SuppressionEntry } from '../src/modules/suppression/entities/suppression-entry.entity';
import { PolicyServer } from '../src/relay-agent/policy/policy-server';
import { bearer, createActiveUser, storeDomain } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const LOG_KEY = 'log-shipper-key-for-tests-0123456789abcdef';
const API_KEY = 'internal-api-key-for-tests-0123456789abcdef';
const WEBHOOK: [string, string] = ['provider', 'webhook-password-for-tests-0123456789'];
const DAY = 86_400_000;

/**
 * Who sent a message (integrations.md "Who sent it", "Relay decision"): one rule for the relay
 * decision, the policy adapter, log ingest and provider events, with identity only from what
 * Postfix wrote. Each case is a defect found by relaying as a dishonest or careless customer would.
 */
describe('Who sent it: one attribution rule', () => {
  let t: TestApp;
  let companies: Repository<Company>;
  let logs: Repository<CleanLog>;
  let suppression: Repository<SuppressionEntry>;
  let queues = 0;

  /** A new queue id, unique in this run (Postfix's short hex form). */
  const queueId = () => `B${(++queues).toString(16).toUpperCase().padStart(9, '0')}`;

  const ship = async (lines: string[], type = 'text/plain', body?: string) =>
    (
      await t
        .http()
        .post('/api/v1/callback-raw-log')
        .set('x-api-key', LOG_KEY)
        .set('content-type', type)
        .send(body ?? lines.join('\n'))
        .expect(200)
    ).body.data as { accepted: number; parsed: number; skipped: number; records: number };

  const decide = async (body: object) =>
    (await t.http().post('/api/internal/relay-status').set('x-api-key', API_KEY).send(body).expect(200)).body
      .data as { action: string; companyUuid: string | null; senderDomainVerified: boolean | null };

  const providerEvents = async (body: unknown) =>
    (
      await t
        .http()
        .post('/callback/mail-provider')
        .auth(...WEBHOOK)
        .send(body as object)
        .expect(200)
    ).body.data as { accepted: number; duplicates: number; skipped: number };

  /** A paying company and its owner's access token. */
  async function company(): Promise<Company & { token: string }> {
    const owner = await createActiveUser(t);
    const found = await companies.findOneByOrFail({ uuid: owner.companyUuid });
    await companies.update(
      { id: found.id },
      {
        packageUuid: '5f0c6f1e-8d3a-4a57-9a43-1b2c3d4e5f60',
        periodStart: new Date(Date.now() - DAY),
        periodEnd: new Date(Date.now() + 30 * DAY),
        quota: 1000,
        used: 0,
      },
    );
    return Object.assign(await companies.findOneByOrFail({ id: found.id }), { token: owner.accessToken });
  }

  /** What the domains area commits and announces when a domain is verified (or deleted: null). */
  async function domain(owner: Company, name: string, status: 'verified' | null): Promise<void> {
    await t.dataSource.getRepository(Domain).delete({ name });
    if (status) await storeDomain(t, owner.id, name, status);
    t.app.get(DomainEvents).emit({ companyId: owner.id, name });
  }

  /** What the companies area commits and announces when a company's allowed networks change. */
  async function allowIps(owner: Company, allowedIps: string[]): Promise<void> {
    await companies.update({ id: owner.id }, { allowedIps });
    t.app.get(CompanyStateEvents).emit({ companyId: owner.id, companyUuid: owner.uuid, kind: 'allowed_ips' });
  }

  const used = async (c: Company) => (await companies.findOneByOrFail({ id: c.id })).used;
  const record = (queue: string, recipient: string) =>
    logs.findOneByOrFail({ queueId: queue, to: recipient });

  /** The lines of one relayed message: Postfix's client line, then what the client sent. */
  function message(
    q: string,
    opts: { client: string; sasl?: string; from: string; to?: string; messageId?: string; remote?: string },
  ): string[] {
    const to = opts.to ?? 'jo@example.net';
    return [
      `Nov 21 18:58:30 relay1 postfix/smtpd[22590]: ${q}: client=${opts.client}${opts.sasl ? `, sasl_method=PLAIN, sasl_username=${opts.sasl}` : ''}`,
      `Nov 21 18:58:30 relay1 postfix/cleanup[22599]: ${q}: message-id=<${opts.messageId ?? `${q}@example.com`}>`,
      `Nov 21 18:58:31 relay1 postfix/qmgr[15878]: ${q}: from=<${opts.from}>, size=920, nrcpt=1 (queue active)`,
      `Nov 21 18:58:35 relay1 postfix/smtp[301]: ${q}: to=<${to}>, relay=mx.example.net[10.74.103.11]:25, delay=1, delays=0.1/0/0.5/0.4, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as ${opts.remote ?? `R${q}`})`,
    ];
  }

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        LOG_SHIPPER_API_KEY: LOG_KEY,
        INTERNAL_API_KEY: API_KEY,
        MAIL_PROVIDER_WEBHOOK_USER: WEBHOOK[0],
        MAIL_PROVIDER_WEBHOOK_PASSWORD: WEBHOOK[1],
        LOG_TIMEZONE: 'UTC',
      },
    });
    companies = t.dataSource.getRepository(Company);
    logs = t.dataSource.getRepository(CleanLog);
    suppression = t.dataSource.getRepository(SuppressionEntry);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('identity only from the smtpd client= line', () => {
    it('a sasl_username forged in MAIL FROM and logged in a reject line charges the sender, not the victim', async () => {
      const victim = await company();
      const sender = await company();
      await domain(sender, 'own.test', 'verified');
      const q = queueId();
      const forged = `"a>, client=h[1.2.3.4], sasl_username=${victim.relayUsername}, b="@own.test`;
      const lines = [
        `Nov 21 18:58:30 relay1 postfix/smtpd[22590]: ${q}: client=h[198.51.100.9]`,
        `Nov 21 18:58:30 relay1 postfix/smtpd[22590]: ${q}: reject: RCPT from h[198.51.100.9]: 450 4.1.2 <bad@nowhere.invalid>: Recipient address rejected: Domain not found; from=<${forged}> to=<bad@nowhere.invalid> proto=ESMTP helo=<h>`,
        `Nov 21 18:58:30 relay1 postfix/cleanup[22599]: ${q}: message-id=<${q}@own.test>`,
        `Nov 21 18:58:31 relay1 postfix/qmgr[15878]: ${q}: from=<${forged}>, size=300, nrcpt=1 (queue active)`,
        `Nov 21 18:58:35 relay1 postfix/smtp[301]: ${q}: to=<jo@example.net>, relay=mx.example.net[10.74.103.11]:25, delay=1, delays=0.1/0/0.5/0.4, dsn=2.0.0, status=sent (250 2.0.0 Ok)`,
        `Nov 21 18:58:36 relay1 postfix/qmgr[15878]: ${q}: removed`,
      ];
      expect(await ship(lines)).toEqual({ accepted: 6, parsed: 6, skipped: 0, records: 2 });

      expect(await record(q, 'jo@example.net')).toMatchObject({
        companyId: sender.id,
        saslUsername: null,
        clientIp: '198.51.100.9',
        from: forged,
        status: 'sent',
      });
      expect(await record(q, 'bad@nowhere.invalid')).toMatchObject({
        companyId: sender.id,
        status: 'rejected',
        dsn: '4.1.2',
        saslUsername: null,
      });
      expect(await used(victim)).toBe(0);
      expect(await used(sender)).toBe(1);
    });

    it('the forged reject line alone, before its client line, names nobody; the client line decides', async () => {
      const victim = await company();
      const q = queueId();
      const forged = `"x>, client=h[1.2.3.4], sasl_username=${victim.relayUsername}, y="@nobody.invalid`;
      await ship([
        `Nov 21 18:58:30 relay1 postfix/smtpd[22590]: ${q}: reject: RCPT from h[198.51.100.9]: 550 5.1.1 <bad@nowhere.invalid>: Recipient address rejected: User unknown; from=<${forged}> to=<bad@nowhere.invalid> proto=ESMTP helo=<sasl_username=${victim.relayUsername}>`,
      ]);
      expect(await record(q, 'bad@nowhere.invalid')).toMatchObject({ companyId: null, saslUsername: null });
      await ship([`Nov 21 18:58:30 relay1 postfix/smtpd[22590]: ${q}: client=h[198.51.100.9]`]);
      expect(await record(q, 'bad@nowhere.invalid')).toMatchObject({
        companyId: null,
        clientIp: '198.51.100.9',
      });
      expect(await used(victim)).toBe(0);
    });

    it('relay usernames compare case-insensitively, in the decision and in the log', async () => {
      const c = await company();
      const upper = c.relayUsername.toUpperCase();
      expect(await decide({ relayUsername: upper })).toMatchObject({ action: 'OK', companyUuid: c.uuid });
      const q = queueId();
      await ship(message(q, { client: 'h[198.51.100.9]', sasl: upper, from: '' }));
      expect(await record(q, 'jo@example.net')).toMatchObject({ companyId: c.id, status: 'sent' });
      expect(await used(c)).toBe(1);
    });
  });

  describe('senders that cannot slip past the verified-domain rule', () => {
    it.each([
      'ceo',
      'ceo@',
      'ceo@[192.0.2.1]',
      'ceo@[IPv6:2001:db8::1]',
      'ceo@x%y',
      'ceo@news.{domain}',
      '"a b"',
    ])('%j is refused as a sender domain not verified', async (pattern) => {
      const c = await company();
      await domain(c, `verified-${c.id}.test`, 'verified');
      const sender = pattern.replace('{domain}', `verified-${c.id}.test`);
      expect(await decide({ relayUsername: c.relayUsername, sender })).toMatchObject({
        action: 'REJECT sender domain not verified',
        senderDomainVerified: false,
        companyUuid: c.uuid,
      });
    });

    it('the null sender is exempt; the verified domain however it is written is verified', async () => {
      const c = await company();
      await domain(c, 'xn--bcher-kva.test', 'verified');
      expect(await decide({ relayUsername: c.relayUsername, sender: '' })).toMatchObject({
        action: 'OK',
        senderDomainVerified: null,
      });
      for (const sender of ['info@bücher.test', 'info@BÜCHER.TEST.', 'info@xn--bcher-kva.test']) {
        expect(await decide({ relayUsername: c.relayUsername, sender })).toMatchObject({
          action: 'OK',
          senderDomainVerified: true,
        });
      }
    });
  });

  describe('mail the relay accepted is counted for the company it accepted it for', () => {
    it('from an allowed network: the null sender, a U-label, a trailing dot, an address literal', async () => {
      const c = await company();
      await allowIps(c, ['192.0.2.0/24']);
      await domain(c, 'xn--bcher-kva.test', 'verified');
      const senders = ['', 'info@bücher.test', 'info@BÜCHER.test.', 'ceo@[192.0.2.1]'];
      for (const sender of senders) {
        expect(await decide({ clientAddress: '192.0.2.7', sender })).toMatchObject({ companyUuid: c.uuid });
        const q = queueId();
        await ship(message(q, { client: 'h[192.0.2.7]', from: sender }));
        expect(await record(q, 'jo@example.net')).toMatchObject({ companyId: c.id, companyUuid: c.uuid });
      }
      expect(await used(c)).toBe(senders.length);

      // Their hard bounces suppress for the company.
      const q = queueId();
      await ship([
        `Nov 21 18:58:30 relay1 postfix/smtpd[22590]: ${q}: client=h[192.0.2.7]`,
        `Nov 21 18:58:31 relay1 postfix/qmgr[15878]: ${q}: from=<>, size=920, nrcpt=1 (queue active)`,
        `Nov 21 18:58:35 relay1 postfix/smtp[302]: ${q}: to=<gone@example.net>, relay=mx.example.net[10.74.103.11]:25, delay=1, delays=0.1/0/0.5/0.4, dsn=5.1.1, status=bounced (host mx.example.net[10.74.103.11] said: 550 5.1.1 User unknown)`,
      ]);
      expect(await suppression.findOneBy({ companyId: c.id, email: 'gone@example.net' })).toMatchObject({
        reason: 'hard_bounce',
        source: 'log',
      });
    });

    it('an IPv4 client seen through an IPv6 socket is the same client', async () => {
      const c = await company();
      await allowIps(c, ['198.51.100.77']);
      for (const clientAddress of [
        '198.51.100.77',
        '::ffff:198.51.100.77',
        '::ffff:c633:644d',
        '0:0:0:0:0:FFFF:C633:644D',
      ]) {
        expect(await decide({ clientAddress, sender: '' })).toMatchObject({ companyUuid: c.uuid });
      }
    });
  });

  describe('a record keeps the company of its own time', () => {
    it('a domain deleted and verified by another company moves nothing: later lines, new recipients, provider events', async () => {
      const a = await company();
      const b = await company();
      await domain(a, `move-${a.id}.test`, 'verified');
      const q = queueId();
      await ship(message(q, { client: 'h[203.0.113.5]', from: `news@move-${a.id}.test`, remote: `RM${q}` }));
      expect(await record(q, 'jo@example.net')).toMatchObject({ companyId: a.id });
      // Settled as the queue's row was created: its facts were complete in that batch.
      const queueRow = await t.dataSource.getRepository(PostfixQueue).findOneByOrFail({ queueId: q });
      expect(queueRow).toMatchObject({ companyId: a.id, attributedAt: expect.any(Date) });

      await domain(a, `move-${a.id}.test`, null);
      await domain(b, `move-${a.id}.test`, 'verified');
      await ship([`Nov 21 18:58:40 relay1 postfix/qmgr[15878]: ${q}: removed`]);
      await ship([
        `Nov 21 18:58:38 relay1 postfix/smtp[301]: ${q}: to=<al@example.net>, relay=mx.example.net[10.74.103.11]:25, delay=1, delays=0.1/0/0.5/0.4, dsn=2.0.0, status=sent (250 2.0.0 Ok)`,
      ]);
      expect(
        await providerEvents({
          RecordType: 'Delivery',
          MessageID: `RM${q}`,
          Recipient: 'jo@example.net',
          DeliveredAt: new Date().toISOString(),
        }),
      ).toMatchObject({ accepted: 1 });

      expect(await record(q, 'jo@example.net')).toMatchObject({ companyId: a.id, status: 'delivered' });
      expect(await record(q, 'al@example.net')).toMatchObject({ companyId: a.id });
      expect(await used(a)).toBe(2);
      expect(await used(b)).toBe(0);
      const bLogs = await t
        .http()
        .get(
          `/api/v1/reports/logs?from=${new Date(Date.now() - 30 * DAY).toISOString().slice(0, 10)}&to=${new Date(Date.now() + DAY).toISOString().slice(0, 10)}`,
        )
        .set(...bearer(b.token))
        .expect(200);
      expect(bLogs.body.data.items).toEqual([]);
    });
  });

  describe('provider events: the provider’s own id wins; an ambiguous Message-ID is not applied', () => {
    it('one spam report whose sg_message_id names one of two messages with the same Message-ID', async () => {
      const a = await company();
      const b = await company();
      await allowIps(a, ['198.51.100.16/28']);
      await allowIps(b, ['198.51.100.32/28']);
      const [qa, qb] = [queueId(), queueId()];
      const messageId = `same-${qa}@example.com`;
      await ship(
        message(qa, {
          client: 'h[198.51.100.17]',
          from: '',
          to: 'same@example.net',
          messageId,
          remote: `SGA${qa}`,
        }),
      );
      await ship(
        message(qb, {
          client: 'h[198.51.100.33]',
          from: '',
          to: 'same@example.net',
          messageId,
          remote: `SGB${qb}`,
        }),
      );

      const spam = (extra: object) => ({
        event: 'spamreport',
        email: 'same@example.net',
        timestamp: Math.floor(Date.now() / 1000),
        'smtp-id': `<${messageId}>`,
        ...extra,
      });
      expect(
        await providerEvents([spam({ sg_event_id: `e1-${qa}`, sg_message_id: `SGA${qa}.filter0001.1.0` })]),
      ).toEqual({
        accepted: 1,
        duplicates: 0,
        skipped: 0,
      });
      expect(await record(qa, 'same@example.net')).toMatchObject({ companyId: a.id, status: 'complained' });
      expect(await record(qb, 'same@example.net')).toMatchObject({ companyId: b.id, status: 'sent' });
      expect(await suppression.findOneBy({ companyId: a.id, email: 'same@example.net' })).toMatchObject({
        reason: 'complaint',
      });
      expect(await suppression.findOneBy({ companyId: b.id, email: 'same@example.net' })).toBeNull();

      // Without the provider's id, the Message-ID names two companies' records: kept, not applied.
      expect(await providerEvents([spam({ sg_event_id: `e2-${qa}` })])).toEqual({
        accepted: 0,
        duplicates: 0,
        skipped: 1,
      });
      expect(await record(qb, 'same@example.net')).toMatchObject({ status: 'sent' });
      expect(await suppression.findOneBy({ companyId: b.id, email: 'same@example.net' })).toBeNull();
      // And it stays unapplied when one of the queues is rebuilt later.
      await ship([`Nov 21 18:58:50 relay1 postfix/qmgr[15878]: ${qb}: removed`]);
      expect(await record(qb, 'same@example.net')).toMatchObject({ status: 'sent' });
    });
  });

  describe('the policy adapter refuses suppressed recipients one by one', () => {
    it('answers REJECT with the reason for a suppressed recipient and OK for the others', async () => {
      const c = await company();
      await suppression.save([
        suppression.create({
          companyId: c.id,
          email: 'gone@example.net',
          reason: 'unsubscribe',
          source: 'user',
        }),
        suppression.create({
          companyId: null,
          email: 'trap@example.net',
          reason: 'hard_bounce',
          source: 'admin',
        }),
      ]);
      const decisions = t.app.get(RelayDecisionService);
      const server = new PolicyServer((query) => decisions.decide(query));
      const port = await server.listen(0);
      try {
        const ask = (recipient: string) =>
          policyRequest(port, {
            request: 'smtpd_access_policy',
            protocol_state: 'RCPT',
            sasl_username: c.relayUsername,
            client_address: '198.51.100.9',
            sender: '',
            recipient,
          });
        expect(await ask('gone@example.net')).toBe('action=REJECT recipient suppressed (unsubscribe)');
        expect(await ask('trap@example.net')).toBe('action=REJECT recipient suppressed (hard_bounce)');
        expect(await ask('jo@example.net')).toBe('action=OK');
      } finally {
        await server.close();
      }
    });
  });

  describe('property: the relay decision and log ingest agree on the company', () => {
    it('for any sender, SASL username and client address, both name the same company or none', async () => {
      const [withUsername, onNetwork, byDomain, sharedA, sharedB] = await Promise.all(
        Array.from({ length: 5 }, () => company()),
      );
      await allowIps(onNetwork, ['203.0.113.0/28']);
      await allowIps(sharedA, ['203.0.113.64/26']);
      await allowIps(sharedB, ['203.0.113.64/26']);
      await domain(byDomain, `p-${byDomain.id}.test`, 'verified');
      await domain(byDomain, `q-${byDomain.id}.test`, 'verified');
      await domain(sharedA, `a-${sharedA.id}.test`, 'verified');
      await domain(sharedB, `b-${sharedB.id}.test`, 'verified');
      const domains = [
        `p-${byDomain.id}.test`,
        `P-${byDomain.id}.TEST.`,
        `Q-${byDomain.id}.test`,
        `a-${sharedA.id}.test`,
        `b-${sharedB.id}.test`,
        `b-${sharedB.id}.test.`,
        `sub.p-${byDomain.id}.test`,
        'bücher.test',
        '[192.0.2.1]',
        'x%y',
        'unknown.test',
        '',
      ];
      const local = fc.oneof(
        fc.constantFrom('news', 'ceo', '"a b"', '"x@y"', '"a>, sasl_username=r-x, b="'),
        fc.stringMatching(/^[a-z0-9.+_-]{1,12}$/),
      );
      const sender = fc.oneof(
        fc.constant(''),
        local,
        fc.tuple(local, fc.constantFrom(...domains)).map(([l, d]) => `${l}@${d}`),
        fc.stringMatching(/^[\x21-\x7e]{0,30}$/).filter((s) => !s.includes('>')),
      );
      const facts = fc.record({
        sender,
        relayUsername: fc.constantFrom(
          undefined,
          withUsername.relayUsername,
          withUsername.relayUsername.toUpperCase(),
          'r-nobody',
        ),
        clientAddress: fc.constantFrom('203.0.113.5', '203.0.113.70', '198.51.100.200'),
      });
      await fc.assert(
        fc.asyncProperty(facts, async ({ sender: from, relayUsername, clientAddress }) => {
          const decision = await decide({
            ...(relayUsername && { relayUsername }),
            clientAddress,
            sender: from,
          });
          const q = queueId();
          await ship(message(q, { client: `h[${clientAddress}]`, sasl: relayUsername, from }));
          const logged = await record(q, 'jo@example.net');
          expect(logged.companyUuid).toBe(decision.companyUuid);
        }),
        { numRuns: 60 },
      );
    });
  });
});

/** One policy request over TCP; answers the reply without its ending empty line. */
function policyRequest(port: number, attributes: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    socket.setEncoding('utf8');
    socket.on('error', reject);
    socket.on('data', (chunk: string) => {
      reply += chunk;
      if (reply.endsWith('\n\n')) {
        socket.end();
        resolve(reply.trimEnd());
      }
    });
    socket.write(
      `${Object.entries(attributes)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n')}\n\n`,
    );
  });
}
