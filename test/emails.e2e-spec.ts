import { createSecretKey, randomBytes } from 'node:crypto';
import { simpleParser } from 'mailparser';
import { In } from 'typeorm';
import { DatabaseRuntime } from '../src/database/database-runtime';
import { SqlDialect } from '../src/database/sql-dialect';
import { Company } from '../src/modules/companies/entities/company.entity';
import { Email } from '../src/modules/emails/entities/email.entity';
import { IdempotencyKey } from '../src/modules/emails/entities/idempotency-key.entity';
import { EmailsService } from '../src/modules/emails/emails.service';
import { RelayDecisionService } from '../src/modules/internal/relay-decision.service';
import { CleanLog } from '../src/modules/log-index/entities/clean-log.entity';
import { verifySubmissionToken } from '../src/modules/relay-submission/submission-token';
import { WebhookEvent } from '../src/modules/webhooks/entities/webhook-event.entity';
import {
  bearer,
  createActiveUser,
  expectFailure,
  LoggedIn,
  RegisteredUser,
  storeDomain,
} from './support/factories';
import { SubmissionServer, SubmittedMessage } from './support/submission-server';
import { TcpForwarder } from './support/tcp-forwarder';
import { createTestApp, freshDatabase, TestApp } from './support/test-app';
import { latch, until } from './support/until';
import { ReceivedWebhook, WebhookReceiver } from './support/webhook-receiver';

const SECRET = 'relay-submit-secret-for-email-tests-0123456789';
const LOG_KEY = 'log-shipper-key-for-email-tests-0123456789abc';
const DAY = 86_400_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const MAIL_EVENTS = ['email.queued', 'email.failed', 'email.sent', 'email.rejected'];
/** Long enough that a state never reached fails clearly, not with Jest's timeout. */
const WITHIN = 20_000;
jest.setTimeout(60_000);

type Owner = RegisteredUser & LoggedIn;

/** A company that may send: its owner, a paid period, and a verified domain. */
interface Customer {
  owner: Owner;
  company: Company;
  domain: string;
}

/** The Message-ID header of a message as it arrived. */
function messageIdOf(raw: Buffer): string | undefined {
  const text = raw.toString('latin1');
  const head = text.slice(0, text.search(/\r?\n\r?\n/));
  return /^message-id:[ \t]*(.*?)\r?$/im.exec(head)?.[1];
}

describe('Sending by HTTP (platform.md "Sending by HTTP")', () => {
  let server: SubmissionServer;
  let relay: TcpForwarder;
  let receiver: WebhookReceiver;
  let t: TestApp;
  let acme: Customer;
  let sendingKey: string;
  let readKey: string;
  let otherDomainKey: string;

  /** A company in a paid period (quota 1,000) with `domain` verified, in `state` (written before it sends). */
  async function customer(domain: string, state: Partial<Company> = {}, app: TestApp = t): Promise<Customer> {
    const owner = await createActiveUser(app);
    const companies = app.dataSource.getRepository(Company);
    const found = await companies.findOneByOrFail({ uuid: owner.companyUuid });
    await companies.update(
      { id: found.id },
      {
        packageUuid: '5f0c6f1e-8d3a-4a57-9a43-1b2c3d4e5f60',
        periodStart: new Date(Date.now() - DAY),
        periodEnd: new Date(Date.now() + 30 * DAY),
        quota: 1000,
        used: 0,
        ...state,
      },
    );
    await storeDomain(app, found.id, domain);
    return { owner, company: await companies.findOneByOrFail({ id: found.id }), domain };
  }

  async function makeKey(owner: LoggedIn, body: Record<string, unknown>): Promise<string> {
    const res = await t
      .http()
      .post('/api/v1/api-keys')
      .set(...bearer(owner.accessToken))
      .send({ name: 'integration', ...body });
    expect(res.status).toBe(201);
    return res.body.data.key as string;
  }

  const post = (token: string, path: string, body: object, idempotencyKey?: string) => {
    const req = t
      .http()
      .post(`/api/v1/emails${path}`)
      .set(...bearer(token));
    if (idempotencyKey !== undefined) req.set('idempotency-key', idempotencyKey);
    return req.send(body);
  };
  const send = (token: string, body: object, idempotencyKey?: string) =>
    post(token, '', body, idempotencyKey);
  const view = (token: string, id: string) =>
    t
      .http()
      .get(`/api/v1/emails/${id}`)
      .set(...bearer(token));

  const emails = () => t.dataSource.getRepository(Email);
  const rowOf = (uuid: string) =>
    emails().createQueryBuilder('e').addSelect('e.content').where('e.uuid = :uuid', { uuid }).getOneOrFail();
  const rowsOf = (c: Customer) => emails().countBy({ companyId: c.company.id });
  const keysOf = (c: Customer) =>
    t.dataSource.getRepository(IdempotencyKey).findBy({ companyId: c.company.id });

  async function reaches(uuid: string, status: Email['status']): Promise<Email> {
    let row!: Email;
    await until(
      async () => (row = await rowOf(uuid)).status === status,
      `email ${uuid} is ${status}`,
      WITHIN,
    );
    return row;
  }

  /** The messages the relay received with this Message-ID. */
  const atRelay = (messageId: string) => server.messages.filter((m) => messageIdOf(m.raw) === messageId);

  async function relayed(messageId: string): Promise<SubmittedMessage> {
    await until(() => atRelay(messageId).length > 0, `the relay received ${messageId}`, WITHIN);
    return atRelay(messageId)[0];
  }

  /** The webhook events the receiver got about one message. */
  const eventsOf = (emailId: string, type: string): ReceivedWebhook['json'][] =>
    receiver.received
      .map((r) => r.json)
      .filter((e) => e.type === type && e.data.emailId === emailId)
      .sort((a, b) => String(a.data.to).localeCompare(String(b.data.to)));

  async function events(emailId: string, type: string, count: number): Promise<ReceivedWebhook['json'][]> {
    await until(() => eventsOf(emailId, type).length >= count, `${count} ${type} of ${emailId}`, WITHIN);
    return eventsOf(emailId, type);
  }

  const pdf = randomBytes(3000);
  const logo = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(700)]);

  /** A message of acme with every part: names, cc and bcc, extra headers, an attachment and an inline image. */
  const fullMessage = (over: Record<string, unknown> = {}) => ({
    from: 'Acme News <news@acme.test>',
    to: ['ana@example.net', 'Bo Berg <bo@example.net>'],
    cc: 'cy@example.net',
    bcc: ['dee@example.net'],
    replyTo: 'help@acme.test',
    subject: 'Your order #42',
    text: 'Thank you for your order.\nIt leaves today.',
    html: '<p>Thank you for your order.</p><img src="cid:logo@acme.test">',
    headers: { 'X-Entity-Ref-ID': 'order-42', 'List-Unsubscribe': '<mailto:unsubscribe@acme.test>' },
    attachments: [
      { filename: 'invoice.pdf', content: pdf.toString('base64'), contentType: 'application/pdf' },
      {
        filename: 'logo.png',
        content: logo.toString('base64'),
        contentType: 'image/png',
        contentId: 'logo@acme.test',
      },
    ],
    tags: { campaign: 'nov' },
    metadata: { orderId: '42' },
    ...over,
  });

  const plain = (over: Record<string, unknown> = {}) => ({
    from: 'news@acme.test',
    to: 'jo@example.net',
    subject: 'Hello',
    text: 'Hello there.',
    ...over,
  });

  const env = () => ({
    RELAY_SUBMIT_URL: relay.url,
    RELAY_SUBMIT_SECRET: SECRET,
    LOG_SHIPPER_API_KEY: LOG_KEY,
    LOG_TIMEZONE: 'UTC',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  });

  beforeAll(async () => {
    server = await new SubmissionServer().start();
    relay = await new TcpForwarder(() => server.port).start();
    receiver = new WebhookReceiver();
    await receiver.start();
    t = await createTestApp({ env: env() });
    acme = await customer('acme.test');
    await storeDomain(t, acme.company.id, 'other.test');
    sendingKey = await makeKey(acme.owner, { scope: 'sending' });
    readKey = await makeKey(acme.owner, { scope: 'read' });
    otherDomainKey = await makeKey(acme.owner, { scope: 'sending', domains: ['other.test'] });
    const hook = await t
      .http()
      .post('/api/v1/webhooks')
      .set(...bearer(acme.owner.accessToken))
      .send({ url: receiver.url('/acme'), events: MAIL_EVENTS });
    expect(hook.status).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
    await relay?.stop();
    await server?.stop();
    await receiver?.close();
  });

  describe('POST /api/v1/emails', () => {
    it.each(['user token', 'sending key'])(
      'with a %s: 202 queued; the relay gets it as the company, whole; then it is submitted',
      async (who) => {
        const token = who === 'user token' ? acme.owner.accessToken : sendingKey;
        const keysBefore = (await keysOf(acme)).length;
        const res = await send(token, fullMessage());
        expect(res.status).toBe(202);
        const { id, messageId } = res.body.data;
        expect(res.body).toEqual({
          status: 'success',
          code: 202,
          msg: 'Email accepted',
          data: {
            id: expect.stringMatching(UUID),
            messageId: `<${id}@acme.test>`,
            status: 'queued',
            accepted: ['ana@example.net', 'bo@example.net', 'cy@example.net', 'dee@example.net'],
            rejected: [],
          },
        });

        const got = await relayed(messageId);
        expect(got.user).toBe(acme.company.relayUsername);
        const login = server.logins.find((l) => l.sessionId === got.sessionId)!;
        expect(login.user).toBe(acme.company.relayUsername);
        expect(
          verifySubmissionToken(createSecretKey(Buffer.from(SECRET)), acme.company.relayUsername, login.pass),
        ).toBe(true);
        expect(got.mailFrom).toBe('news@acme.test');
        expect(got.rcptTo).toEqual([
          'ana@example.net',
          'bo@example.net',
          'cy@example.net',
          'dee@example.net',
        ]);

        const mail = await simpleParser(got.raw, { keepCidLinks: true });
        expect(mail.messageId).toBe(messageId);
        expect(mail.subject).toBe('Your order #42');
        expect(mail.from?.value).toEqual([{ address: 'news@acme.test', name: 'Acme News' }]);
        expect([mail.to].flat().flatMap((a) => a!.value)).toEqual([
          { address: 'ana@example.net', name: '' },
          { address: 'bo@example.net', name: 'Bo Berg' },
        ]);
        expect([mail.cc].flat().flatMap((a) => a!.value)).toEqual([{ address: 'cy@example.net', name: '' }]);
        expect(mail.bcc).toBeUndefined();
        const head = got.raw.toString('latin1').split(/\r\n\r\n/)[0];
        expect(head).not.toContain('dee@example.net');
        expect(mail.replyTo?.value).toEqual([{ address: 'help@acme.test', name: '' }]);
        expect(mail.text).toBe('Thank you for your order.\nIt leaves today.');
        expect(mail.html).toBe('<p>Thank you for your order.</p><img src="cid:logo@acme.test">');
        expect(mail.headers.get('x-entity-ref-id')).toBe('order-42');
        expect(head).toMatch(/^List-Unsubscribe: <mailto:unsubscribe@acme\.test>\r?$/m);
        const parts = new Map(mail.attachments.map((a) => [a.filename, a]));
        expect([...parts.keys()].sort()).toEqual(['invoice.pdf', 'logo.png']);
        const invoice = parts.get('invoice.pdf')!;
        expect([invoice.contentType, invoice.contentDisposition, invoice.cid, invoice.related]).toEqual([
          'application/pdf',
          'attachment',
          undefined,
          undefined,
        ]);
        expect(invoice.content.equals(pdf)).toBe(true);
        const image = parts.get('logo.png')!;
        expect([image.contentType, image.contentDisposition, image.cid, image.related]).toEqual([
          'image/png',
          'inline',
          'logo@acme.test',
          true,
        ]);
        expect(image.content.equals(logo)).toBe(true);

        const row = await reaches(id, 'submitted');
        expect(row).toMatchObject({
          kind: 'compose',
          messageId,
          envelopeFrom: 'news@acme.test',
          from: 'Acme News <news@acme.test>',
          accepted: ['ana@example.net', 'bo@example.net', 'cy@example.net', 'dee@example.net'],
          rejected: [],
          queueId: got.queueId,
          attempts: 1,
          claim: null,
          lastError: null,
          nextAttemptAt: null,
          content: null,
          tags: { campaign: 'nov' },
          metadata: { orderId: '42' },
        });
        expect(row.relayResponse).toBe(`250 2.0.0 Ok: queued as ${got.queueId}`);
        expect(row.apiKeyId === null).toBe(who === 'user token');
        expect(atRelay(messageId)).toHaveLength(1);
        expect((await keysOf(acme)).length).toBe(keysBefore);

        const read = await view(token, id).expect(200);
        const submittedAt = row.submittedAt!.toISOString();
        expect(read.body).toEqual({
          status: 'success',
          code: 200,
          msg: 'Email fetched',
          data: {
            id,
            messageId,
            from: 'Acme News <news@acme.test>',
            to: ['ana@example.net', 'Bo Berg <bo@example.net>'],
            cc: ['cy@example.net'],
            bcc: ['dee@example.net'],
            subject: 'Your order #42',
            status: 'submitted',
            tags: { campaign: 'nov' },
            metadata: { orderId: '42' },
            scheduledAt: null,
            createdAt: expect.stringMatching(ISO),
            submittedAt,
            queueId: got.queueId,
            lastError: null,
            recipients: ['ana', 'bo', 'cy', 'dee'].map((name) => ({
              email: `${name}@example.net`,
              status: 'queued',
              dsn: null,
              response: null,
              lastEventAt: submittedAt,
            })),
          },
        });
      },
    );
  });

  describe('messages stored at the same moment', () => {
    const judgedFor = (recipients: string[], attachmentBytes: number[] = []) => {
      const service = t.app.get(EmailsService);
      return Promise.all(
        recipients.map((to, n) =>
          service.judgeMessage(
            { company: acme.company, apiKey: null },
            {
              from: 'news@acme.test',
              to: [to],
              subject: `For ${to}`,
              text: 'Hello',
              ...(attachmentBytes[n] && {
                attachments: [
                  { filename: 'a.bin', content: randomBytes(attachmentBytes[n]).toString('base64') },
                ],
              }),
            },
          ),
        ),
      );
    };
    const stored = (ids: string[]) => emails().countBy({ uuid: In(ids) });
    /** Stores each judged message as its own request, all at once: the rows of each INSERT made. */
    async function rowsPerInsertStoring(judged: Awaited<ReturnType<typeof judgedFor>>): Promise<number[]> {
      const inserts = jest.spyOn(t.app.get(SqlDialect), 'insertMany');
      try {
        await Promise.all(judged.map((j) => t.app.get(EmailsService).store([j], null)));
        return inserts.mock.calls.filter(([, target]) => target === Email).map((c) => c[2].length);
      } finally {
        inserts.mockRestore();
      }
    }

    it('share one INSERT on PostgreSQL (each its own on SQLite), and every one is stored', async () => {
      const judged = await judgedFor(['sam1@example.net', 'sam2@example.net', 'sam3@example.net']);
      expect(await rowsPerInsertStoring(judged)).toEqual(
        t.app.get(DatabaseRuntime).isPostgres ? [3] : [1, 1, 1],
      );
      expect(await stored(judged.map((j) => j.answer.id))).toBe(3);
      for (const j of judged) await reaches(j.answer.id, 'submitted');
    });

    it('large ones go in statements of their own: at most 1,000,000 characters of content a shared INSERT', async () => {
      // 450,000 bytes are 600,000 characters of base64: the second large one does not join the first.
      const judged = await judgedFor(
        ['big0@example.net', 'big1@example.net', 'big2@example.net', 'big3@example.net'],
        [0, 450_000, 450_000, 0],
      );
      expect(await rowsPerInsertStoring(judged)).toEqual(
        t.app.get(DatabaseRuntime).isPostgres ? [2, 2] : [1, 1, 1, 1],
      );
      expect(await stored(judged.map((j) => j.answer.id))).toBe(4);
    });

    it('one the database refuses fails alone: the others stored with it are kept', async () => {
      const [good, bad, alsoGood] = await judgedFor([
        'ok1@example.net',
        'bad@example.net',
        'ok2@example.net',
      ]);
      bad.row.envelopeFrom = null as unknown as string; // NOT NULL: refused on both databases
      const results = await Promise.allSettled(
        [good, bad, alsoGood].map((j) => t.app.get(EmailsService).store([j], null)),
      );
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(await stored([good.answer.id, alsoGood.answer.id])).toBe(2);
      expect(await stored([bad.answer.id])).toBe(0);
    });
  });

  describe('judged before anything is stored', () => {
    /** Sends `body` with `token` and asserts the refusal, and that acme stored no message and kept no key. */
    async function refused(token: string, body: object, code: number, msg: string | RegExp, path = '') {
      const before = await rowsOf(acme);
      const res = await post(token, path, body, `refused-${randomBytes(6).toString('hex')}`);
      expect([res.status, res.body.msg]).toEqual([
        code,
        typeof msg === 'string' ? msg : expect.stringMatching(msg),
      ]);
      expectFailure(res.body, code, msg);
      expect(await rowsOf(acme)).toBe(before);
      expect(await keysOf(acme)).toEqual([]);
      return res;
    }

    it('a sender of a domain the company has not verified: 422', async () => {
      await refused(
        acme.owner.accessToken,
        plain({ from: 'news@unverified.test' }),
        422,
        'Sender domain not verified',
      );
      await storeDomain(t, acme.company.id, 'pending.test', 'pending');
      await refused(sendingKey, plain({ from: 'Pat <pat@pending.test>' }), 422, 'Sender domain not verified');
      // A subdomain of a verified domain is not that domain.
      await refused(sendingKey, plain({ from: 'x@mail.acme.test' }), 422, 'Sender domain not verified');
    });

    it("a key whose domains do not hold the sender's: 403; a read key: 403 (scope)", async () => {
      await refused(otherDomainKey, plain(), 403, 'API key may not send from acme.test');
      await refused(readKey, plain(), 403, 'API key scope does not allow this route');
      await refused(
        readKey,
        { messages: [plain()] },
        403,
        'API key scope does not allow this route',
        '/batch',
      );
    });

    it('a company without a package: 403; a full key sends; one address given twice is one recipient', async () => {
      const unpaid = await customer('unpaid.test', {
        packageUuid: null,
        periodStart: null,
        periodEnd: null,
        quota: 0,
      });
      const res = await send(unpaid.owner.accessToken, plain({ from: 'news@unpaid.test' }));
      expectFailure(res.body, 403, 'No active package');
      expect(await rowsOf(unpaid)).toBe(0);

      const fullKey = await makeKey(acme.owner, { scope: 'full', domains: ['acme.test'] });
      const sent = await send(
        fullKey,
        plain({
          from: 'News <NEWS@ACME.test>',
          to: ['jo@example.net'],
          cc: 'JO@example.net',
          bcc: 'jo@example.net ',
        }),
      );
      expect(sent.status).toBe(202);
      expect(sent.body.data.accepted).toEqual(['jo@example.net']);
      const got = await relayed(sent.body.data.messageId);
      expect([got.mailFrom.toLowerCase(), got.rcptTo]).toEqual(['news@acme.test', ['jo@example.net']]);
      await reaches(sent.body.data.id, 'submitted');
    });

    it('scheduledAt up to 7 days ahead is kept; one in the past leaves now', async () => {
      const at = new Date(Date.now() + 7 * DAY - 60_000);
      const later = await send(sendingKey, plain({ scheduledAt: at.toISOString() }));
      expect([later.status, later.body.data.status]).toEqual([202, 'scheduled']);
      const past = await send(
        sendingKey,
        plain({ scheduledAt: new Date(Date.now() - 60_000).toISOString() }),
      );
      expect([past.status, past.body.data.status]).toEqual([202, 'queued']);
      await relayed(past.body.data.messageId);
      expect(await reaches(past.body.data.id, 'submitted')).toMatchObject({ scheduledAt: null });
      await t
        .http()
        .delete(`/api/v1/emails/${later.body.data.id}`)
        .set(...bearer(sendingKey))
        .expect(200);
    });

    it('a suspended company: 403 "Company suspended"; a company out of quota: 429 with retry-after', async () => {
      const suspended = await customer('suspended.test', { status: 'suspended', suspendedReason: 'abuse' });
      const body = plain({ from: 'news@suspended.test' });
      const res = await send(suspended.owner.accessToken, body);
      expect(res.status).toBe(403);
      expectFailure(res.body, 403, 'Company suspended');
      expect(await rowsOf(suspended)).toBe(0);

      const periodEnd = new Date(Date.now() + 10 * DAY);
      const spent = await customer('spent.test', { quota: 100, used: 100, periodEnd });
      const before = Date.now();
      const over = await send(spent.owner.accessToken, plain({ from: 'news@spent.test' }));
      const after = Date.now();
      expect(over.status).toBe(429);
      expectFailure(over.body, 429, 'Quota exhausted');
      const retryAfter = Number(over.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(Math.ceil((periodEnd.getTime() - after) / 1000));
      expect(retryAfter).toBeLessThanOrEqual(Math.ceil((periodEnd.getTime() - before) / 1000));
      expect(await rowsOf(spent)).toBe(0);
    });

    it('suppressed recipients come back rejected with the reason; only the others get RCPT; all suppressed: 422', async () => {
      const added = await t
        .http()
        .post('/api/v1/suppression')
        .set(...bearer(acme.owner.accessToken))
        .send({ emails: ['Gone@Example.net', 'left@example.net'] });
      expect(added.status).toBe(201);

      const res = await send(
        sendingKey,
        plain({
          to: ['ana@example.net', 'gone@example.net'],
          cc: 'LEFT@example.net',
          bcc: 'dee@example.net',
        }),
      );
      expect(res.status).toBe(202);
      const { id, messageId } = res.body.data;
      expect(res.body.data).toEqual({
        id,
        messageId: `<${id}@acme.test>`,
        status: 'queued',
        accepted: ['ana@example.net', 'dee@example.net'],
        rejected: [
          { email: 'gone@example.net', reason: 'suppressed (manual)' },
          { email: 'LEFT@example.net', reason: 'suppressed (manual)' },
        ],
      });
      const got = await relayed(messageId);
      expect(got.rcptTo).toEqual(['ana@example.net', 'dee@example.net']);
      const mail = await simpleParser(got.raw);
      // The headers name every recipient given (but bcc); the envelope only those accepted.
      expect([mail.to].flat().flatMap((a) => a!.value.map((v) => v.address))).toEqual([
        'ana@example.net',
        'gone@example.net',
      ]);
      await reaches(id, 'submitted');
      const read = await view(sendingKey, id).expect(200);
      expect(read.body.data.recipients).toEqual([
        expect.objectContaining({ email: 'ana@example.net', status: 'queued' }),
        expect.objectContaining({ email: 'dee@example.net', status: 'queued' }),
        {
          email: 'gone@example.net',
          status: 'rejected',
          dsn: null,
          response: 'suppressed (manual)',
          lastEventAt: read.body.data.createdAt,
        },
        {
          email: 'LEFT@example.net',
          status: 'rejected',
          dsn: null,
          response: 'suppressed (manual)',
          lastEventAt: read.body.data.createdAt,
        },
      ]);

      await refused(
        sendingKey,
        plain({ to: ['gone@example.net'], cc: ['left@example.net'] }),
        422,
        'Every recipient is on the suppression list',
      );
    });

    const many = (n: number, prefix: string) =>
      Array.from({ length: n }, (_, i) => `${prefix}${i}@example.net`);
    const INVALID = 'Validation failed';
    const one = (field: string, ...messages: string[]) => [{ field, messages }];
    it.each<[string, Record<string, unknown>, string, Array<{ field: string; messages: string[] }> | null]>([
      [
        'no subject',
        { subject: undefined },
        INVALID,
        one(
          'subject',
          'subject must be a string',
          'subject must not contain line breaks',
          'subject must be shorter than or equal to 998 characters',
          'subject must be longer than or equal to 1 characters',
        ),
      ],
      [
        'an empty subject',
        { subject: '' },
        INVALID,
        one('subject', 'subject must be longer than or equal to 1 characters'),
      ],
      ['neither text nor html', { text: undefined }, 'text or html is required', null],
      [
        '51 recipients in to, cc and bcc',
        { to: many(30, 'to'), cc: many(20, 'cc'), bcc: 'b@example.net' },
        'to, cc and bcc hold at most 50 recipients together',
        null,
      ],
      [
        '51 recipients in to',
        { to: many(51, 'to') },
        INVALID,
        one('to', 'to must contain no more than 50 elements'),
      ],
      [
        'a From header',
        { headers: { From: 'boss@acme.test' } },
        INVALID,
        one('headers', 'headers: From is set by the service and cannot be given'),
      ],
      [
        'a content-type header',
        { headers: { 'content-type': 'text/plain' } },
        INVALID,
        one('headers', 'headers: content-type is set by the service and cannot be given'),
      ],
      [
        'a header value with a line break',
        { headers: { 'X-Note': 'a\r\nBcc: spy@example.net' } },
        INVALID,
        one('headers', 'headers: X-Note must not contain line breaks'),
      ],
      [
        'a tag name with a space',
        { tags: { 'my tag': 'x' } },
        INVALID,
        one('tags', 'tags: tag name "my tag" must be 1-64 of A-Z a-z 0-9 _ -'),
      ],
      [
        'a tag value too long',
        { tags: { campaign: 'x'.repeat(65) } },
        INVALID,
        one('tags', 'tags: tag campaign must be 1-64 of A-Z a-z 0-9 _ -'),
      ],
      [
        '11 tags',
        { tags: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`t${i}`, 'v'])) },
        INVALID,
        one('tags', 'tags: at most 10 tags'),
      ],
      [
        'metadata over 2 KB',
        { metadata: { blob: 'x'.repeat(2040) } },
        INVALID,
        one('metadata', 'metadata: at most 2048 bytes as JSON'),
      ],
      [
        'metadata of 2 KB in bytes (1,100 two-byte characters)',
        { metadata: { note: 'é'.repeat(1100) } },
        INVALID,
        one('metadata', 'metadata: at most 2048 bytes as JSON'),
      ],
      [
        'metadata that is not flat',
        { metadata: { nested: { a: '1' } } },
        INVALID,
        one('metadata', 'metadata: nested must be a string'),
      ],
      [
        'scheduledAt 8 days ahead',
        { scheduledAt: new Date(Date.now() + 8 * DAY).toISOString() },
        'scheduledAt must be at most 7 days ahead',
        null,
      ],
      [
        'a recipient that is no address',
        { to: ['ana@example.net', 'not an address'] },
        'to: "not an address" is not an e-mail address',
        null,
      ],
      [
        'an unknown field',
        { priority: 'high' },
        INVALID,
        one('priority', 'property priority should not exist'),
      ],
    ])('%s: 400', async (_name, change, msg, details) => {
      const res = await refused(sendingKey, plain(change), 400, msg);
      expect(res.body.error).toEqual(details ? { msg, details } : { msg });
    });

    it('without RELAY_SUBMIT_URL every sending route answers 503', async () => {
      const bare = await createTestApp({
        env: { RELAY_SUBMIT_URL: undefined, RELAY_SUBMIT_SECRET: undefined },
      });
      try {
        const owner = await createActiveUser(bare);
        for (const [path, body] of [
          ['', plain()],
          ['/batch', { messages: [plain()] }],
          [
            '/raw',
            {
              from: 'news@acme.test',
              to: ['jo@example.net'],
              raw: Buffer.from('Subject: x\r\n\r\nx\r\n').toString('base64'),
            },
          ],
        ] as const) {
          const res = await bare
            .http()
            .post(`/api/v1/emails${path}`)
            .set(...bearer(owner.accessToken))
            .send(body);
          expect([path, res.status]).toEqual([path, 503]);
          expectFailure(res.body, 503, 'Sending by HTTP needs a relay (RELAY_SUBMIT_URL)');
        }
        expect(await bare.dataSource.getRepository(Email).count()).toBe(0);
      } finally {
        await bare.close();
      }
    });
  });

  describe('Idempotency-Key', () => {
    const keyRow = async (key: string) =>
      t.dataSource.getRepository(IdempotencyKey).findOneBy({ companyId: acme.company.id, key });

    it('the same key and body: the first answer again (200), one message sent, one row', async () => {
      const before = await rowsOf(acme);
      const body = plain({ subject: 'Once only', tags: { run: 'idem' } });
      const first = await send(sendingKey, body, 'order-42-confirmation');
      expect(first.status).toBe(202);
      const again = await send(sendingKey, body, 'order-42-confirmation');
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ ...first.body, code: 200 });
      // Another credential of the same company: the same key is the company's.
      const byUser = await send(acme.owner.accessToken, body, 'order-42-confirmation');
      expect([byUser.status, byUser.body.data]).toEqual([200, first.body.data]);

      await relayed(first.body.data.messageId);
      await reaches(first.body.data.id, 'submitted');
      expect(await rowsOf(acme)).toBe(before + 1);
      expect(atRelay(first.body.data.messageId)).toHaveLength(1);
      const kept = await keyRow('order-42-confirmation');
      expect(kept).toMatchObject({ responseStatus: 202 });
      expect(JSON.parse(kept!.response!)).toEqual(first.body.data);
    });

    it('the same key with another body: 409, nothing stored', async () => {
      const first = await send(sendingKey, plain({ subject: 'First body' }), 'reused-key');
      expect(first.status).toBe(202);
      const before = await rowsOf(acme);
      const other = await send(sendingKey, plain({ subject: 'Second body' }), 'reused-key');
      expect(other.status).toBe(409);
      expectFailure(other.body, 409, 'Idempotency-Key reused with another request');
      // The same body on another route is another request too.
      const raw = Buffer.from('Subject: First body\r\n\r\nHello there.\r\n').toString('base64');
      const onRaw = await post(
        sendingKey,
        '/raw',
        { from: 'news@acme.test', to: ['jo@example.net'], raw },
        'reused-key',
      );
      expectFailure(onRaw.body, 409, 'Idempotency-Key reused with another request');
      expect(await rowsOf(acme)).toBe(before);
      await reaches(first.body.data.id, 'submitted');
    });

    it('while the first request is handled: 409 in progress; then the first answers 202', async () => {
      const decisions = t.app.get(RelayDecisionService);
      const decide = decisions.decide.bind(decisions);
      const inside = latch();
      const release = latch();
      const spy = jest.spyOn(decisions, 'decide').mockImplementationOnce(async (query) => {
        inside.open();
        await release.wait;
        return decide(query);
      });
      try {
        const before = await rowsOf(acme);
        const body = plain({ subject: 'Held' });
        const first = send(sendingKey, body, 'held-key').then((res) => res);
        await inside.wait;
        const second = await send(sendingKey, body, 'held-key');
        expect(second.status).toBe(409);
        expectFailure(second.body, 409, 'Request with this Idempotency-Key in progress');
        expect(await keyRow('held-key')).toMatchObject({ responseStatus: null, response: null });
        release.open();
        const done = await first;
        expect(done.status).toBe(202);
        expect(await rowsOf(acme)).toBe(before + 1);
        const third = await send(sendingKey, body, 'held-key');
        expect([third.status, third.body.data]).toEqual([200, done.body.data]);
        await relayed(done.body.data.messageId);
        await reaches(done.body.data.id, 'submitted');
        expect(atRelay(done.body.data.messageId)).toHaveLength(1);
      } finally {
        release.open();
        spy.mockRestore();
      }
    });

    it('two requests at once with one key: one message, the other answered 409 or 200', async () => {
      const before = await rowsOf(acme);
      const body = plain({ subject: 'Together' });
      const answers = await Promise.all([
        send(sendingKey, body, 'together'),
        send(sendingKey, body, 'together'),
      ]);
      const statuses = answers.map((a) => a.status).sort();
      expect([
        [200, 202],
        [202, 409],
      ]).toContainEqual(statuses);
      expect(await rowsOf(acme)).toBe(before + 1);
      const accepted = answers.find((a) => a.status === 202)!;
      await reaches(accepted.body.data.id, 'submitted');
      expect(atRelay(accepted.body.data.messageId)).toHaveLength(1);
    });

    it('a refused first request leaves the key free for a retry', async () => {
      const refusedFirst = await send(sendingKey, plain({ from: 'news@unverified.test' }), 'retry-me');
      expectFailure(refusedFirst.body, 422, 'Sender domain not verified');
      expect(await keyRow('retry-me')).toBeNull();
      const invalid = await send(sendingKey, plain({ text: undefined }), 'retry-me');
      expectFailure(invalid.body, 400, 'text or html is required');
      expect(await keyRow('retry-me')).toBeNull();
      const mended = await send(sendingKey, plain(), 'retry-me');
      expect(mended.status).toBe(202);
      expect(await keyRow('retry-me')).toMatchObject({ responseStatus: 202 });
      await reaches(mended.body.data.id, 'submitted');
    });

    it("is the company's own: another company's request with the same key is a request of its own", async () => {
      const first = await send(sendingKey, plain({ subject: 'Mine' }), 'shared-key');
      expect(first.status).toBe(202);
      const other = await customer('keyholder.test');
      const theirs = await send(
        other.owner.accessToken,
        plain({ from: 'news@keyholder.test', subject: 'Mine' }),
        'shared-key',
      );
      expect(theirs.status).toBe(202);
      expect(theirs.body.data.id).not.toBe(first.body.data.id);
      expect(await rowsOf(other)).toBe(1);
      await reaches(first.body.data.id, 'submitted');
      await reaches(theirs.body.data.id, 'submitted');
    });

    it('a key whose first request died (2 minutes in progress) or whose answer is 24 hours old is taken anew', async () => {
      const keys = t.dataSource.getRepository(IdempotencyKey);
      await keys.insert({
        companyId: acme.company.id,
        key: 'abandoned',
        requestHash: 'f'.repeat(64),
        responseStatus: null,
        response: null,
      });
      await keys.update(
        { companyId: acme.company.id, key: 'abandoned' },
        { createdAt: new Date(Date.now() - 121_000) },
      );
      const retried = await send(sendingKey, plain({ subject: 'After a crash' }), 'abandoned');
      expect(retried.status).toBe(202);
      expect(await keyRow('abandoned')).toMatchObject({ responseStatus: 202 });

      await keys.update(
        { companyId: acme.company.id, key: 'abandoned' },
        { createdAt: new Date(Date.now() - DAY - 1000) },
      );
      const later = await send(sendingKey, plain({ subject: 'After a crash' }), 'abandoned');
      expect(later.status).toBe(202);
      expect(later.body.data.id).not.toBe(retried.body.data.id);
      await reaches(retried.body.data.id, 'submitted');
      await reaches(later.body.data.id, 'submitted');
    });

    it('a key that is not 1 to 256 printable characters: 400', async () => {
      const before = await rowsOf(acme);
      for (const key of ['x'.repeat(257), 'tab\there']) {
        const res = await send(sendingKey, plain(), key);
        expectFailure(res.body, 400, 'Idempotency-Key must be 1 to 256 printable characters');
      }
      expect(await rowsOf(acme)).toBe(before);
    });
  });

  describe('POST /api/v1/emails/batch', () => {
    it('judges each message on its own: the refused one has its error, the others are stored and sent', async () => {
      const before = await rowsOf(acme);
      const res = await post(sendingKey, '/batch', {
        messages: [
          plain({ to: 'one@example.net', subject: 'One' }),
          plain({ from: 'news@unverified.test', subject: 'Two' }),
          plain({ to: ['three@example.net', 'gone@example.net'], subject: 'Three' }),
        ],
      });
      expect(res.status).toBe(202);
      const [first, , third] = res.body.data.items;
      expect(res.body).toEqual({
        status: 'success',
        code: 202,
        msg: 'Emails accepted',
        data: {
          items: [
            {
              index: 0,
              id: expect.stringMatching(UUID),
              messageId: `<${first.id}@acme.test>`,
              status: 'queued',
              accepted: ['one@example.net'],
              rejected: [],
            },
            { index: 1, error: { code: 422, msg: 'Sender domain not verified' } },
            {
              index: 2,
              id: expect.stringMatching(UUID),
              messageId: `<${third.id}@acme.test>`,
              status: 'queued',
              accepted: ['three@example.net'],
              rejected: [{ email: 'gone@example.net', reason: 'suppressed (manual)' }],
            },
          ],
        },
      });
      expect(await rowsOf(acme)).toBe(before + 2);
      const one = await relayed(first.messageId);
      const three = await relayed(third.messageId);
      expect([one.rcptTo, three.rcptTo]).toEqual([['one@example.net'], ['three@example.net']]);
      expect((await simpleParser(one.raw)).subject).toBe('One');
      expect((await simpleParser(three.raw)).subject).toBe('Three');
      await reaches(first.id, 'submitted');
      await reaches(third.id, 'submitted');
    });

    it('an Idempotency-Key answers the whole batch again', async () => {
      const body = { messages: [plain({ subject: 'Batch once' })] };
      const first = await post(sendingKey, '/batch', body, 'batch-key');
      expect(first.status).toBe(202);
      const again = await post(sendingKey, '/batch', body, 'batch-key');
      expect([again.status, again.body.data]).toEqual([200, first.body.data]);
      await reaches(first.body.data.items[0].id, 'submitted');
      expect(atRelay(first.body.data.items[0].messageId)).toHaveLength(1);
    });

    it('0 or 101 messages: 400', async () => {
      for (const messages of [[], Array.from({ length: 101 }, () => plain())]) {
        const res = await post(sendingKey, '/batch', { messages });
        expectFailure(res.body, 400, 'Validation failed');
        expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'messages' })]);
      }
    });
  });

  describe('POST /api/v1/emails/raw', () => {
    const rawMessage = (extra: string[] = []) =>
      Buffer.from(
        [
          'From: Acme News <news@acme.test>',
          'To: ana@example.net',
          'Subject: Raw hello',
          ...extra,
          'Date: Tue, 24 Nov 2026 10:00:00 +0000',
          'MIME-Version: 1.0',
          'Content-Type: text/plain; charset=utf-8',
          '',
          'Line one.',
          '.A line that starts with a dot.',
          'Line three.',
          '',
        ].join('\r\n'),
        'latin1',
      );

    it('without a Message-ID: one is added first, the bytes are otherwise as given', async () => {
      const raw = rawMessage();
      const res = await post(sendingKey, '/raw', {
        from: 'bounces@acme.test',
        to: ['ana@example.net', 'bcc-only@example.net'],
        raw: raw.toString('base64'),
        tags: { kind: 'raw' },
      });
      expect(res.status).toBe(202);
      const { id } = res.body.data;
      expect(res.body.data).toEqual({
        id: expect.stringMatching(UUID),
        messageId: `<${id}@acme.test>`,
        status: 'queued',
        accepted: ['ana@example.net', 'bcc-only@example.net'],
        rejected: [],
      });
      const got = await relayed(`<${id}@acme.test>`);
      expect(got.mailFrom).toBe('bounces@acme.test');
      expect(got.rcptTo).toEqual(['ana@example.net', 'bcc-only@example.net']);
      expect(got.raw.toString('latin1')).toBe(`Message-ID: <${id}@acme.test>\r\n${raw.toString('latin1')}`);
      const row = await reaches(id, 'submitted');
      expect(row).toMatchObject({
        kind: 'raw',
        from: 'Acme News <news@acme.test>',
        envelopeFrom: 'bounces@acme.test',
        subject: 'Raw hello',
        to: ['ana@example.net', 'bcc-only@example.net'],
        tags: { kind: 'raw' },
        content: null,
        queueId: got.queueId,
      });
    });

    it('with a Message-ID: kept, and the bytes are exactly as given', async () => {
      const raw = rawMessage(['Message-ID: <given-42@shop.acme.test>']);
      const res = await post(sendingKey, '/raw', {
        from: 'news@acme.test',
        to: 'jo@example.net',
        raw: raw.toString('base64'),
      });
      expect(res.status).toBe(202);
      expect(res.body.data.messageId).toBe('<given-42@shop.acme.test>');
      const got = await relayed('<given-42@shop.acme.test>');
      expect(got.raw.equals(raw)).toBe(true);
      await reaches(res.body.data.id, 'submitted');
    });

    it('is judged by the envelope sender', async () => {
      const before = await rowsOf(acme);
      const res = await post(sendingKey, '/raw', {
        from: 'news@unverified.test',
        to: 'jo@example.net',
        raw: rawMessage().toString('base64'),
      });
      expectFailure(res.body, 422, 'Sender domain not verified');
      expect(await rowsOf(acme)).toBe(before);
    });
  });

  describe('scheduled messages', () => {
    it('wait for their time; DELETE cancels one (200 {}), a second DELETE is a 409', async () => {
      const at = new Date(Date.now() + 3_600_000);
      const res = await send(sendingKey, plain({ subject: 'Later', scheduledAt: at.toISOString() }));
      expect(res.status).toBe(202);
      const { id, messageId } = res.body.data;
      expect(res.body.data).toEqual({
        id,
        messageId: `<${id}@acme.test>`,
        status: 'scheduled',
        accepted: ['jo@example.net'],
        rejected: [],
      });
      const read = await view(sendingKey, id).expect(200);
      expect(read.body.data).toMatchObject({
        status: 'scheduled',
        scheduledAt: at.toISOString(),
        submittedAt: null,
      });

      // A message sent after it leaves at once; the scheduled one stays.
      const now = await send(sendingKey, plain({ subject: 'Now' }));
      await relayed(now.body.data.messageId);
      await reaches(now.body.data.id, 'submitted');
      expect(atRelay(messageId)).toEqual([]);
      const waiting = await rowOf(id);
      expect(waiting).toMatchObject({ status: 'scheduled', attempts: 0, claim: null });
      expect([waiting.scheduledAt?.toISOString(), waiting.nextAttemptAt?.toISOString()]).toEqual([
        at.toISOString(),
        at.toISOString(),
      ]);
      expect(waiting.content).not.toBeNull();

      const canceled = await t
        .http()
        .delete(`/api/v1/emails/${id}`)
        .set(...bearer(sendingKey));
      expect([canceled.status, canceled.body]).toEqual([
        200,
        { status: 'success', code: 200, msg: 'Email canceled', data: {} },
      ]);
      expect(await rowOf(id)).toMatchObject({ status: 'canceled', content: null, nextAttemptAt: null });
      const after = await view(sendingKey, id).expect(200);
      expect(after.body.data).toMatchObject({
        status: 'canceled',
        recipients: [
          {
            email: 'jo@example.net',
            status: 'canceled',
            dsn: null,
            response: null,
            lastEventAt: expect.any(String),
          },
        ],
      });
      const twice = await t
        .http()
        .delete(`/api/v1/emails/${id}`)
        .set(...bearer(sendingKey));
      expectFailure(twice.body, 409, 'Only a scheduled message can be canceled, and this one left the queue');
      // A submitted one cannot be canceled either.
      const late = await t
        .http()
        .delete(`/api/v1/emails/${now.body.data.id}`)
        .set(...bearer(acme.owner.accessToken));
      expect(late.status).toBe(409);
      // A read key may read it, not cancel it.
      const byReader = await t
        .http()
        .delete(`/api/v1/emails/${id}`)
        .set(...bearer(readKey));
      expectFailure(byReader.body, 403, 'API key scope does not allow this route');
    });

    it('leave at their time', async () => {
      const res = await send(
        sendingKey,
        plain({ subject: 'Due', scheduledAt: new Date(Date.now() + 3_600_000).toISOString() }),
      );
      expect(res.body.data.status).toBe('scheduled');
      const { id, messageId } = res.body.data;
      // Its time comes: the worker's next look takes it.
      await emails().update({ uuid: id }, { nextAttemptAt: new Date(Date.now() - 1000) });
      const got = await relayed(messageId);
      expect((await simpleParser(got.raw)).subject).toBe('Due');
      const row = await reaches(id, 'submitted');
      expect(row).toMatchObject({ queueId: got.queueId, attempts: 1, content: null });
      const canceled = await t
        .http()
        .delete(`/api/v1/emails/${id}`)
        .set(...bearer(sendingKey));
      expect(canceled.status).toBe(409);
    });
  });

  describe('when the relay cannot take it', () => {
    it('the relay down: kept queued with the error and tried again later; back up: handed over once', async () => {
      await relay.stop();
      let id = '';
      let messageId = '';
      try {
        const before = Date.now();
        const res = await send(sendingKey, plain({ subject: 'Relay down' }));
        expect(res.status).toBe(202);
        ({ id, messageId } = res.body.data);
        let row!: Email;
        await until(async () => (row = await rowOf(id)).attempts === 1, 'the first attempt failed', WITHIN);
        const after = Date.now();
        expect(row).toMatchObject({ status: 'queued', claim: null, submittedAt: null, queueId: null });
        expect(row.lastError).toMatch(/^The relay is unreachable \((ECONNREFUSED|ECONNECTION)\): /);
        expect(row.content).not.toBeNull();
        // platform.md: tried again in 1 minute, then doubling.
        expect(row.nextAttemptAt!.getTime()).toBeGreaterThanOrEqual(before + 60_000);
        expect(row.nextAttemptAt!.getTime()).toBeLessThanOrEqual(after + 60_000);
        const read = await view(sendingKey, id).expect(200);
        expect(read.body.data).toMatchObject({
          status: 'queued',
          lastError: row.lastError,
          recipients: [{ email: 'jo@example.net', status: 'queued' }],
        });
      } finally {
        await relay.start();
      }
      await emails().update({ uuid: id }, { nextAttemptAt: new Date() });
      const got = await relayed(messageId);
      const row = await reaches(id, 'submitted');
      expect(row).toMatchObject({ attempts: 2, lastError: null, queueId: got.queueId, content: null });
      expect(atRelay(messageId)).toHaveLength(1);
    });

    it('a recipient the relay refuses for good (5xx at RCPT) is rejected; the others go', async () => {
      server.recipientAnswers.set('nobody@example.net', {
        code: 550,
        text: '5.1.1 <nobody@example.net>: Recipient address rejected',
      });
      try {
        const res = await send(sendingKey, plain({ to: ['jo@example.net', 'nobody@example.net'] }));
        const { id, messageId } = res.body.data;
        const got = await relayed(messageId);
        expect(got.rcptTo).toEqual(['jo@example.net']);
        const row = await reaches(id, 'submitted');
        expect([row.accepted, row.rejected]).toEqual([
          ['jo@example.net'],
          [
            {
              email: 'nobody@example.net',
              reason: '550 5.1.1 <nobody@example.net>: Recipient address rejected',
            },
          ],
        ]);
        const read = await view(sendingKey, id).expect(200);
        expect(read.body.data.recipients).toEqual([
          expect.objectContaining({ email: 'jo@example.net', status: 'queued' }),
          expect.objectContaining({
            email: 'nobody@example.net',
            status: 'rejected',
            response: '550 5.1.1 <nobody@example.net>: Recipient address rejected',
          }),
        ]);
        const [queued] = await events(id, 'email.queued', 1);
        expect(queued.data.to).toBe('jo@example.net');
        const [rejected] = await events(id, 'email.rejected', 1);
        expect(rejected.data).toMatchObject({
          emailId: id,
          messageId,
          to: 'nobody@example.net',
          status: 'rejected',
          reason: '550 5.1.1 <nobody@example.net>: Recipient address rejected',
        });
      } finally {
        server.recipientAnswers.clear();
      }
    });

    it('the relay down for 24 hours: failed, with an email.failed per recipient', async () => {
      await relay.stop();
      try {
        const res = await send(
          sendingKey,
          plain({ to: ['ana@example.net', 'bo@example.net'], tags: { campaign: 'late' } }),
        );
        const { id } = res.body.data;
        await until(async () => (await rowOf(id)).attempts === 1, 'the first attempt failed', WITHIN);
        // Stored a day ago: the next attempt that fails is its last.
        await emails().update(
          { uuid: id },
          { createdAt: new Date(Date.now() - DAY - 60_000), nextAttemptAt: new Date() },
        );
        const row = await reaches(id, 'failed');
        expect(row).toMatchObject({ attempts: 2, content: null, nextAttemptAt: null, claim: null });
        expect(row.lastError).toMatch(/^The relay is unreachable \((ECONNREFUSED|ECONNECTION)\): /);
        const failed = await events(id, 'email.failed', 2);
        expect(failed.map((e) => [e.data.to, e.data.reason, e.data.tags])).toEqual([
          ['ana@example.net', row.lastError, { campaign: 'late' }],
          ['bo@example.net', row.lastError, { campaign: 'late' }],
        ]);
      } finally {
        await relay.start();
      }
    });

    // platform.md: "the relay [...] answering 4xx → tried again"; only a 5xx rejects a recipient. The
    // worker takes a 4xx at RCPT (the others taken) as a rejection for good: reported, not built here
    // (the message would need a second submission of its own for those recipients).
    it('a recipient the relay defers (4xx at RCPT) while it takes the others goes again later, with a queue id of its own', async () => {
      server.recipientAnswers.set('later@example.net', {
        code: 450,
        text: '4.2.0 <later@example.net>: Greylisted',
      });
      let id: string;
      let messageId: string;
      try {
        const res = await send(sendingKey, plain({ to: ['jo@example.net', 'later@example.net'] }));
        ({ id, messageId } = res.body.data);
        const first = await relayed(messageId);
        expect(first.rcptTo).toEqual(['jo@example.net']);
        await until(async () => (await rowOf(id)).claim === null, 'the submission is recorded', WITHIN);
        const row = await rowOf(id);
        expect(row).toMatchObject({
          status: 'submitted',
          accepted: ['jo@example.net', 'later@example.net'],
          rejected: [],
          pending: ['later@example.net'],
          queueId: first.queueId,
          queueIds: [first.queueId],
          attempts: 1,
          lastError: '450 4.2.0 <later@example.net>: Greylisted',
        });
        expect(row.content).not.toBeNull();
        expect(row.nextAttemptAt!.getTime() - row.submittedAt!.getTime()).toBe(60_000);
        const [queued] = await events(id, 'email.queued', 1);
        expect(queued.data).toMatchObject({ to: 'jo@example.net', queueId: first.queueId });
      } finally {
        server.recipientAnswers.clear();
      }

      // Due again: only the deferred recipient goes, the same message in a queue of its own.
      await emails().update({ uuid: id }, { nextAttemptAt: new Date() });
      await until(() => atRelay(messageId).length === 2, 'the deferred recipient is handed over', WITHIN);
      const [first, second] = atRelay(messageId);
      expect(second.rcptTo).toEqual(['later@example.net']);
      expect(second.queueId).not.toBe(first.queueId);
      expect(second.raw.toString('utf8').replace(/\r\n/g, '\n')).toBe(
        first.raw.toString('utf8').replace(/\r\n/g, '\n'),
      );
      await until(
        async () => (await rowOf(id)).pending.length === 0,
        'the second submission is recorded',
        WITHIN,
      );
      expect(await rowOf(id)).toMatchObject({
        status: 'submitted',
        queueId: first.queueId,
        queueIds: [first.queueId, second.queueId],
        accepted: ['jo@example.net', 'later@example.net'],
        rejected: [],
        content: null,
        nextAttemptAt: null,
        claim: null,
        attempts: 2,
        lastError: null,
      });
      const queued = await events(id, 'email.queued', 2);
      expect(queued.map((e) => [e.data.to, e.data.queueId])).toEqual([
        ['jo@example.net', first.queueId],
        ['later@example.net', second.queueId],
      ]);
      expect(atRelay(messageId)).toHaveLength(2);
    });

    it('a deferred recipient the relay still defers 24 hours after the message was due is given up: rejected, email.failed', async () => {
      server.recipientAnswers.set('never@example.net', {
        code: 451,
        text: '4.3.0 <never@example.net>: Try again later',
      });
      try {
        const res = await send(sendingKey, plain({ to: ['jo@example.net', 'never@example.net'] }));
        const { id, messageId } = res.body.data;
        await relayed(messageId);
        await until(
          async () => (await rowOf(id)).pending.length === 1,
          'the partial submission is recorded',
          WITHIN,
        );
        await emails().update(
          { uuid: id },
          { createdAt: new Date(Date.now() - DAY - 60_000), nextAttemptAt: new Date() },
        );
        await until(
          async () => (await rowOf(id)).nextAttemptAt === null,
          'the deferred recipient is given up',
          WITHIN,
        );
        const row = await rowOf(id);
        expect(row).toMatchObject({
          status: 'submitted',
          accepted: ['jo@example.net'],
          pending: [],
          rejected: [
            { email: 'never@example.net', reason: 'gave up: 451 4.3.0 <never@example.net>: Try again later' },
          ],
          content: null,
          claim: null,
        });
        const [failed] = await events(id, 'email.failed', 1);
        expect(failed.data).toMatchObject({ to: 'never@example.net', emailId: id, status: 'failed' });
        expect(eventsOf(id, 'email.failed')).toHaveLength(1);
        // Handed over once to jo, and once more (refused) to never: nobody got it twice.
        expect(atRelay(messageId)).toHaveLength(1);
      } finally {
        server.recipientAnswers.clear();
      }
    });

    it('the relay refusing the message for good: failed, with an email.failed per recipient', async () => {
      server.dataAnswer = { code: 554, text: '5.7.1 Message refused by policy' };
      try {
        const res = await send(
          sendingKey,
          plain({
            to: ['ana@example.net', 'bo@example.net'],
            tags: { campaign: 'refused' },
            metadata: { orderId: '7' },
          }),
        );
        expect(res.status).toBe(202);
        const { id, messageId } = res.body.data;
        const row = await reaches(id, 'failed');
        expect(row).toMatchObject({
          attempts: 1,
          lastError: '554 5.7.1 Message refused by policy',
          content: null,
          nextAttemptAt: null,
          claim: null,
          submittedAt: null,
        });
        const failed = await events(id, 'email.failed', 2);
        expect(failed.map((e) => e.data)).toEqual(
          ['ana@example.net', 'bo@example.net'].map((to) => ({
            emailId: id,
            messageId,
            companyUuid: acme.company.uuid,
            domain: 'acme.test',
            from: 'news@acme.test',
            to,
            status: 'failed',
            at: expect.stringMatching(ISO),
            reason: '554 5.7.1 Message refused by policy',
            tags: { campaign: 'refused' },
            metadata: { orderId: '7' },
          })),
        );
        const read = await view(sendingKey, id).expect(200);
        expect(read.body.data).toMatchObject({
          status: 'failed',
          lastError: '554 5.7.1 Message refused by policy',
          recipients: ['ana', 'bo'].map((name) => ({
            email: `${name}@example.net`,
            status: 'failed',
            dsn: null,
            response: '554 5.7.1 Message refused by policy',
            lastEventAt: expect.any(String),
          })),
        });
        expect(atRelay(messageId)).toEqual([]);
      } finally {
        server.dataAnswer = undefined;
      }
    });
  });

  describe('replicas', () => {
    it('one with EMAIL_SUBMITTER=false stores and answers, and leaves the hand-over to one that submits', async () => {
      const database = await freshDatabase();
      const apiOnly = await createTestApp({ database, env: { ...env(), EMAIL_SUBMITTER: 'false' } });
      let submitter: TestApp | undefined;
      try {
        const sender = await customer('replica.test', {}, apiOnly);
        const res = await apiOnly
          .http()
          .post('/api/v1/emails')
          .set(...bearer(sender.owner.accessToken))
          .send(plain({ from: 'news@replica.test' }));
        expect(res.status).toBe(202);
        const { id, messageId } = res.body.data;
        expect(await apiOnly.dataSource.getRepository(Email).findOneByOrFail({ uuid: id })).toMatchObject({
          status: 'queued',
          attempts: 0,
          claim: null,
        });
        // Its shutdown waits for any submission it began: there was none.
        await apiOnly.close();
        expect(atRelay(messageId)).toHaveLength(0);

        submitter = await createTestApp({ database, env: env() });
        const got = await relayed(messageId);
        expect(got.rcptTo).toEqual(['jo@example.net']);
        const emails = submitter.dataSource.getRepository(Email);
        await until(
          async () => (await emails.findOneByOrFail({ uuid: id })).status === 'submitted',
          'the submitting replica records it',
          WITHIN,
        );
        expect(await emails.findOneByOrFail({ uuid: id })).toMatchObject({
          queueId: got.queueId,
          attempts: 1,
        });
      } finally {
        await submitter?.close();
        await database.drop();
      }
    });
  });

  describe('RELAY_SUBMIT_CONCURRENCY', () => {
    it('bounds the messages a process hands to the relay at once; the rest wait unclaimed for a free place', async () => {
      const held = new SubmissionServer();
      await held.start();
      let release!: () => void;
      held.holdData = new Promise<void>((resolve) => (release = resolve));
      const database = await freshDatabase();
      const app = await createTestApp({
        database,
        env: { ...env(), RELAY_SUBMIT_URL: held.url, RELAY_SUBMIT_CONCURRENCY: '2' },
      });
      try {
        const sender = await customer('bounded.test', {}, app);
        const res = await app
          .http()
          .post('/api/v1/emails/batch')
          .set(...bearer(sender.owner.accessToken))
          .send({
            messages: ['a', 'b', 'c', 'd', 'e'].map((to) =>
              plain({ from: 'news@bounded.test', to: `${to}@example.net` }),
            ),
          });
        expect(res.status).toBe(202);
        const ids: string[] = res.body.data.items.map((item: { id: string }) => item.id);
        expect(ids).toHaveLength(5);
        // The five were stored together, so the worker's first claim saw them all: it took two.
        await until(() => held.inData >= 2, 'two messages reach the relay', WITHIN);
        const emails = app.dataSource.getRepository(Email);
        const rows = await emails.find({ where: ids.map((uuid) => ({ uuid })) });
        expect(rows.filter((e) => e.claim !== null)).toHaveLength(2);
        expect(rows.filter((e) => e.claim === null).map((e) => e.status)).toEqual([
          'queued',
          'queued',
          'queued',
        ]);

        release();
        await until(() => held.messages.length === 5, 'all five reach the relay', WITHIN);
        for (const id of ids)
          await until(
            async () => (await emails.findOneByOrFail({ uuid: id })).status === 'submitted',
            `${id} recorded`,
            WITHIN,
          );
        // Without the bound one company's pool alone would have had three at once.
        expect(held.mostInData).toBe(2);
        expect(held.messages.map((m) => m.rcptTo[0]).sort()).toEqual(
          ['a', 'b', 'c', 'd', 'e'].map((to) => `${to}@example.net`),
        );
      } finally {
        release();
        await app.close();
        await held.stop();
        await database.drop();
      }
    });
  });

  describe('webhook events', () => {
    it('email.queued: one per recipient the relay took, with the emailId, tags, metadata and queue id', async () => {
      const res = await send(
        sendingKey,
        plain({
          to: ['ana@example.net', 'gone@example.net'],
          cc: 'bo@example.net',
          tags: { campaign: 'nov', variant: 'b' },
          metadata: { orderId: '42', customer: 'c-9' },
        }),
      );
      const { id, messageId } = res.body.data;
      const queued = await events(id, 'email.queued', 2);
      const row = await reaches(id, 'submitted');
      expect(queued.map((e) => e.data)).toEqual(
        ['ana@example.net', 'bo@example.net'].map((to) => ({
          emailId: id,
          messageId,
          companyUuid: acme.company.uuid,
          domain: 'acme.test',
          from: 'news@acme.test',
          to,
          status: 'queued',
          at: row.submittedAt!.toISOString(),
          queueId: row.queueId,
          tags: { campaign: 'nov', variant: 'b' },
          metadata: { orderId: '42', customer: 'c-9' },
        })),
      );
    });

    it('email.rejected: one per suppressed recipient, written with the message', async () => {
      const res = await send(
        sendingKey,
        plain({
          to: ['ana@example.net', 'gone@example.net'],
          bcc: 'LEFT@example.net',
          tags: { campaign: 'nov' },
          metadata: { orderId: '43' },
        }),
      );
      expect(res.status).toBe(202);
      const { id, messageId } = res.body.data;
      // In the transaction that stored the message: there once the 202 is.
      const kept = await t.dataSource
        .getRepository(WebhookEvent)
        .createQueryBuilder('e')
        .where('e.type = :type', { type: 'email.rejected' })
        .andWhere('e.payload LIKE :id', { id: `%"emailId":"${id}"%` })
        .getCount();
      expect(kept).toBe(2);
      const rejected = await events(id, 'email.rejected', 2);
      const row = await rowOf(id);
      expect(rejected.map((e) => e.data)).toEqual(
        ['gone@example.net', 'LEFT@example.net'].map((to) => ({
          emailId: id,
          messageId,
          companyUuid: acme.company.uuid,
          domain: 'acme.test',
          from: 'news@acme.test',
          to,
          status: 'rejected',
          at: row.createdAt.toISOString(),
          reason: 'suppressed (manual)',
          tags: { campaign: 'nov' },
          metadata: { orderId: '43' },
        })),
      );
      const [queued] = await events(id, 'email.queued', 1);
      expect(queued.data.to).toBe('ana@example.net');
    });
  });

  describe('GET /api/v1/emails', () => {
    let lister: Customer;
    let listerKey: string;
    let sent: Array<{ id: string; messageId: string }>;

    beforeAll(async () => {
      lister = await customer('lister.test');
      listerKey = await makeKey(lister.owner, { scope: 'read' });
      sent = [];
      for (const [subject, tags, scheduledAt] of [
        ['First', { campaign: 'nov' }, undefined],
        ['Second', { campaign: 'dec' }, undefined],
        ['Third', { campaign: 'nov', variant: 'b' }, new Date(Date.now() + 3_600_000).toISOString()],
      ] as const) {
        const res = await send(
          lister.owner.accessToken,
          plain({ from: 'news@lister.test', subject, tags, ...(scheduledAt && { scheduledAt }) }),
        );
        expect(res.status).toBe(202);
        sent.push(res.body.data);
      }
      await reaches(sent[0].id, 'submitted');
      await reaches(sent[1].id, 'submitted');
    });

    const list = (query: string, token = lister.owner.accessToken) =>
      t
        .http()
        .get(`/api/v1/emails${query}`)
        .set(...bearer(token));
    const ids = (res: { body: { data: { items: Array<{ id: string }> } } }) =>
      res.body.data.items.map((i) => i.id);

    it("pages the company's own messages, newest first", async () => {
      const first = await list('?limit=2').expect(200);
      expect(first.body).toMatchObject({ status: 'success', code: 200, msg: 'Emails fetched' });
      expect(first.body.data.meta).toEqual({ page: 1, limit: 2, totalItems: 3, totalPages: 2 });
      expect(ids(first)).toEqual([sent[2].id, sent[1].id]);
      expect(first.body.data.items[0]).toEqual({
        id: sent[2].id,
        messageId: sent[2].messageId,
        from: 'news@lister.test',
        to: ['jo@example.net'],
        cc: [],
        bcc: [],
        subject: 'Third',
        status: 'scheduled',
        tags: { campaign: 'nov', variant: 'b' },
        metadata: {},
        scheduledAt: expect.stringMatching(ISO),
        createdAt: expect.stringMatching(ISO),
        submittedAt: null,
        queueId: null,
        lastError: null,
      });
      const second = await list('?limit=2&page=2').expect(200);
      expect(second.body.data.meta).toEqual({ page: 2, limit: 2, totalItems: 3, totalPages: 2 });
      expect(ids(second)).toEqual([sent[0].id]);
      // A read key of the company lists the same.
      expect(ids(await list('', listerKey).expect(200))).toEqual([sent[2].id, sent[1].id, sent[0].id]);
    });

    it('filters by status and by tag', async () => {
      expect(ids(await list('?status=submitted').expect(200))).toEqual([sent[1].id, sent[0].id]);
      expect(ids(await list('?status=scheduled').expect(200))).toEqual([sent[2].id]);
      expect(ids(await list('?status=failed').expect(200))).toEqual([]);
      expect(ids(await list('?tag=campaign:nov').expect(200))).toEqual([sent[2].id, sent[0].id]);
      expect(ids(await list('?tag=variant:b').expect(200))).toEqual([sent[2].id]);
      expect(ids(await list('?tag=campaign:no').expect(200))).toEqual([]);
      expect(ids(await list('?tag=campaign:nov&status=submitted').expect(200))).toEqual([sent[0].id]);
      // Tags are matched exactly: `_` is a character of a tag, not a wildcard, and case counts.
      expect(ids(await list('?tag=campaig_:nov').expect(200))).toEqual([]);
      expect(ids(await list('?tag=Campaign:NOV').expect(200))).toEqual([]);
      const today = new Date().toISOString().slice(0, 10);
      const tomorrow = new Date(Date.now() + DAY).toISOString().slice(0, 10);
      const yesterday = new Date(Date.now() - DAY).toISOString().slice(0, 10);
      expect(ids(await list(`?from=${today}&to=${today}`).expect(200))).toEqual([
        sent[2].id,
        sent[1].id,
        sent[0].id,
      ]);
      expect(ids(await list(`?from=${tomorrow}`).expect(200))).toEqual([]);
      expect(ids(await list(`?to=${yesterday}`).expect(200))).toEqual([]);
      for (const bad of ['?status=sent', '?tag=campaign', '?tag=a:b:c', '?limit=101', '?from=yesterday']) {
        expectFailure((await list(bad)).body, 400, 'Validation failed');
      }
    });

    it("never shows another company's message: not listed, 404 by id, 404 to cancel", async () => {
      const acmeList = await list('?limit=100', acme.owner.accessToken).expect(200);
      expect(ids(acmeList)).not.toEqual(expect.arrayContaining([sent[0].id]));
      expect(acmeList.body.data.items.every((i: { from: string }) => !i.from.includes('lister.test'))).toBe(
        true,
      );
      const listed = await list('?limit=100').expect(200);
      expect(listed.body.data.meta.totalItems).toBe(3);

      for (const token of [acme.owner.accessToken, sendingKey, readKey]) {
        expectFailure((await view(token, sent[0].id)).body, 404, 'Email not found');
      }
      const cancel = await t
        .http()
        .delete(`/api/v1/emails/${sent[2].id}`)
        .set(...bearer(acme.owner.accessToken));
      expectFailure(cancel.body, 404, 'Email not found');
      expect((await rowOf(sent[2].id)).status).toBe('scheduled');
      expectFailure((await view(acme.owner.accessToken, 'not-a-uuid')).body, 400);
      // A sending key does not list (platform.md: `read` opens the list).
      expectFailure((await list('', sendingKey)).body, 403, 'API key scope does not allow this route');
    });
  });

  describe('clean records of a message sent by HTTP', () => {
    const postLogs = (lines: string[]) =>
      t
        .http()
        .post('/api/v1/callback-raw-log')
        .set('x-api-key', LOG_KEY)
        .set('content-type', 'text/plain')
        .send(lines.join('\n'));

    it('carry its emailId: GET shows the recipients sent, and email.sent carries emailId, tags and metadata', async () => {
      const res = await send(
        sendingKey,
        plain({
          to: ['jo@example.net', 'Kim@Example.NET', 'lee@example.net'],
          tags: { campaign: 'logs' },
          metadata: { orderId: '99' },
        }),
      );
      const { id, messageId } = res.body.data;
      const got = await relayed(messageId);
      await reaches(id, 'submitted');
      const q = got.queueId;
      const user = acme.company.relayUsername;
      const delivered = (second: number, to: string, remote: string) =>
        `Nov 21 18:58:${second} relay1 postfix/smtp[301]: ${q}: to=<${to}>, relay=mx.example.net[192.0.2.7]:25, delay=5, delays=1/0/2/2, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as ${remote})`;
      await postLogs([
        `Nov 21 18:58:30 relay1 postfix/smtpd[22590]: ${q}: client=localhost[127.0.0.1], sasl_method=PLAIN, sasl_username=${user}`,
        `Nov 21 18:58:30 relay1 postfix/cleanup[22599]: ${q}: message-id=${messageId}`,
        `Nov 21 18:58:31 relay1 postfix/qmgr[15878]: ${q}: from=<news@acme.test>, size=920, nrcpt=3 (queue active)`,
        delivered(35, 'jo@example.net', 'F12DF84004'),
        delivered(36, 'Kim@Example.NET', 'F12DF84005'),
      ]).expect(200);

      const records = await t.dataSource
        .getRepository(CleanLog)
        .find({ where: { queueId: q }, order: { to: 'ASC' } });
      expect(records.map((r) => [r.to, r.status, r.emailId, r.companyId])).toEqual([
        ['jo@example.net', 'sent', id, acme.company.id],
        ['kim@example.net', 'sent', id, acme.company.id],
      ]);
      const read = await view(sendingKey, id).expect(200);
      expect(read.body.data.recipients).toEqual([
        {
          email: 'jo@example.net',
          status: 'sent',
          dsn: '2.0.0',
          response: '250 2.0.0 Ok: queued as F12DF84004',
          lastEventAt: expect.stringMatching(ISO),
        },
        {
          email: 'Kim@Example.NET',
          status: 'sent',
          dsn: '2.0.0',
          response: '250 2.0.0 Ok: queued as F12DF84005',
          lastEventAt: expect.stringMatching(ISO),
        },
        expect.objectContaining({ email: 'lee@example.net', status: 'queued' }),
      ]);
      const sent = await events(id, 'email.sent', 2);
      expect(sent.map((e) => e.data)).toEqual(
        [
          ['jo@example.net', records[0].id],
          ['kim@example.net', records[1].id],
        ].map(([to, recordId]) =>
          expect.objectContaining({
            recordId,
            emailId: id,
            messageId: messageId.slice(1, -1),
            companyUuid: acme.company.uuid,
            to,
            status: 'sent',
            tags: { campaign: 'logs' },
            metadata: { orderId: '99' },
          }),
        ),
      );
    });
  });
});
