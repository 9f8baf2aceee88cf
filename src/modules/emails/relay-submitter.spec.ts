import { LoggerService } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { simpleParser } from 'mailparser';
import { freePort } from '../../../test/support/free-port';
import { SubmissionServer } from '../../../test/support/submission-server';
import { until } from '../../../test/support/until';
import {
  RelayRefusedError,
  RelaySubmitter,
  RelaySubmitterOptions,
  RelayUnavailableError,
  SubmissionMessage,
} from './relay-submitter';

const AUTH = { user: 'acme-relay', pass: 'token-0123456789abcdef' };

/** Every line the submitter logged, to check that no password is among them. */
function recordingLogger(lines: string[]): LoggerService {
  const record = (...args: unknown[]) => void lines.push(args.map(String).join(' '));
  return { log: record, error: record, warn: record, debug: record, verbose: record };
}

function plainMessage(subject: string, to = ['rcpt@dest.test']): SubmissionMessage {
  return {
    envelope: { from: 'sender@acme.test', to },
    compose: {
      from: 'sender@acme.test',
      to,
      cc: [],
      bcc: [],
      subject,
      text: `Body of ${subject}`,
      messageId: `<${randomBytes(8).toString('hex')}@acme.test>`,
    },
  };
}

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the submission to fail');
}

describe('RelaySubmitter (nodemailer pooled SMTP to a loopback server)', () => {
  let server: SubmissionServer;
  let submitter: RelaySubmitter | undefined;
  const logLines: string[] = [];

  const start = async (options: Partial<RelaySubmitterOptions> = {}, secure = false) => {
    server = await new SubmissionServer({ secure }).start();
    submitter = new RelaySubmitter({ url: server.url, logger: recordingLogger(logLines), ...options });
    return submitter;
  };

  afterEach(async () => {
    await submitter?.close();
    submitter = undefined;
    // Every connection the submitter opened is gone before the server stops.
    await until(() => server.closed.length === server.opened.length, 'every connection is closed');
    await server.stop();
    expect(logLines.join('\n')).not.toContain('token-');
    logLines.length = 0;
  });

  it('composes a message and submits it over STARTTLS with AUTH PLAIN: envelope as given, bcc only in RCPT TO, queue id from the 250 answer', async () => {
    const relay = await start();
    const attachment = randomBytes(3000);
    const image = randomBytes(2000);
    const date = new Date('2030-01-02T03:04:05Z');
    const result = await relay.submit(AUTH, {
      envelope: {
        from: 'bounces+42@acme.test',
        to: ['to@dest.test', 'cc@dest.test', 'hidden@dest.test'],
      },
      compose: {
        from: 'Acme Billing <billing@acme.test>',
        to: ['to@dest.test'],
        cc: ['cc@dest.test'],
        bcc: ['hidden@dest.test'],
        replyTo: 'help@acme.test',
        subject: 'Your invoice — März',
        text: 'Plain text body',
        html: '<p>HTML body <img src="cid:logo@acme"></p>',
        headers: { 'X-Campaign': 'spring-2030', 'List-Unsubscribe': '<mailto:unsub@acme.test>' },
        attachments: [
          { filename: 'invoice.pdf', content: attachment, contentType: 'application/pdf' },
          { filename: 'logo.png', content: image, contentType: 'image/png', contentId: 'logo@acme' },
        ],
        messageId: '<0b6f2a1e-5d3c-4f0e-9a57-1c2d3e4f5a6b@acme.test>',
        date,
      },
    });

    expect(server.logins).toEqual([
      expect.objectContaining({ method: 'PLAIN', ...{ user: AUTH.user, pass: AUTH.pass } }),
    ]);
    expect(server.messages).toHaveLength(1);
    const [got] = server.messages;
    expect(got.secure).toBe(true);
    expect(got.user).toBe(AUTH.user);
    expect(got.mailFrom).toBe('bounces+42@acme.test');
    expect(got.rcptTo).toEqual(['to@dest.test', 'cc@dest.test', 'hidden@dest.test']);

    expect(result).toEqual({
      queueId: got.queueId,
      response: `250 2.0.0 Ok: queued as ${got.queueId}`,
      accepted: ['to@dest.test', 'cc@dest.test', 'hidden@dest.test'],
      rejected: [],
      deferred: [],
    });
    expect(result.queueId).toMatch(/^4Xk[0-9A-Za-z]{9}$/);

    const head = got.raw.subarray(0, got.raw.indexOf('\r\n\r\n')).toString();
    expect(head).not.toMatch(/^bcc:/im);
    expect(head).not.toContain('hidden@dest.test');
    const parsed = await simpleParser(got.raw, { keepCidLinks: true });
    expect(parsed.from?.text).toBe('"Acme Billing" <billing@acme.test>');
    expect(parsed.from?.value).toEqual([{ name: 'Acme Billing', address: 'billing@acme.test' }]);
    expect(parsed.headers.get('to')).toEqual(expect.objectContaining({ text: 'to@dest.test' }));
    expect(parsed.headers.get('cc')).toEqual(expect.objectContaining({ text: 'cc@dest.test' }));
    expect(parsed.bcc).toBeUndefined();
    expect(parsed.replyTo?.text).toBe('help@acme.test');
    expect(parsed.subject).toBe('Your invoice — März');
    expect(parsed.messageId).toBe('<0b6f2a1e-5d3c-4f0e-9a57-1c2d3e4f5a6b@acme.test>');
    expect(parsed.date?.toISOString()).toBe(date.toISOString());
    expect(parsed.headers.get('x-campaign')).toBe('spring-2030');
    expect(parsed.headerLines).toContainEqual({
      key: 'list-unsubscribe',
      line: 'List-Unsubscribe: <mailto:unsub@acme.test>',
    });
    expect(head).toMatch(/^Content-Type: multipart\/mixed/im);
    expect(got.raw.toString()).toMatch(/Content-Type: multipart\/alternative/i);
    expect(parsed.text?.trim()).toBe('Plain text body');
    expect(parsed.html).toBe('<p>HTML body <img src="cid:logo@acme"></p>');

    const pdf = parsed.attachments.find((a) => a.filename === 'invoice.pdf');
    expect(pdf?.contentType).toBe('application/pdf');
    expect(pdf?.contentDisposition).toBe('attachment');
    expect(pdf?.content.equals(attachment)).toBe(true);
    const logo = parsed.attachments.find((a) => a.filename === 'logo.png');
    expect(logo?.contentType).toBe('image/png');
    expect(logo?.contentDisposition).toBe('inline');
    expect(logo?.cid).toBe('logo@acme');
    expect(logo?.related).toBe(true);
    expect(logo?.content.equals(image)).toBe(true);
  });

  it('submits a raw message byte for byte (dots at line starts included), with the envelope as given', async () => {
    const relay = await start();
    const raw = Buffer.from(
      [
        'From: Someone <someone@acme.test>',
        'To: list@acme.test',
        'Subject: raw',
        'Message-ID: <raw-1@acme.test>',
        'MIME-Version: 1.0',
        'Content-Type: text/plain; charset=utf-8',
        'Content-Transfer-Encoding: 8bit',
        '',
        '.a line starting with a dot',
        '..and two',
        '.',
        'Grüße',
        '',
      ].join('\r\n'),
    );
    const result = await relay.submit(AUTH, {
      envelope: { from: 'bounces@acme.test', to: ['a@dest.test', 'b@dest.test'] },
      raw,
    });
    const [got] = server.messages;
    expect(got.mailFrom).toBe('bounces@acme.test');
    expect(got.rcptTo).toEqual(['a@dest.test', 'b@dest.test']);
    expect(got.raw.equals(raw)).toBe(true);
    expect(result.queueId).toBe(got.queueId);
    expect(result.accepted).toEqual(['a@dest.test', 'b@dest.test']);
  });

  it('submits over implicit TLS (smtps://)', async () => {
    const relay = await start({}, true);
    const result = await relay.submit(AUTH, plainMessage('over smtps'));
    expect(server.messages).toEqual([expect.objectContaining({ secure: true, user: AUTH.user })]);
    expect(result.queueId).toBe(server.messages[0].queueId);
  });

  it('reports a recipient refused with 550 as rejected and one refused with 450 as deferred; the others are accepted', async () => {
    const relay = await start();
    server.recipientAnswers.set('gone@dest.test', {
      code: 550,
      text: '5.1.1 <gone@dest.test>: Recipient address rejected',
    });
    server.recipientAnswers.set('busy@dest.test', {
      code: 450,
      text: '4.2.0 <busy@dest.test>: Recipient address rejected: Greylisted',
    });
    const result = await relay.submit(
      AUTH,
      plainMessage('partial', ['ok@dest.test', 'gone@dest.test', 'busy@dest.test']),
    );
    expect(result.accepted).toEqual(['ok@dest.test']);
    expect(result.rejected).toEqual([
      {
        email: 'gone@dest.test',
        code: 550,
        response: '550 5.1.1 <gone@dest.test>: Recipient address rejected',
      },
    ]);
    expect(result.deferred).toEqual([
      {
        email: 'busy@dest.test',
        code: 450,
        response: '450 4.2.0 <busy@dest.test>: Recipient address rejected: Greylisted',
      },
    ]);
    expect(server.messages.map((m) => m.rcptTo)).toEqual([['ok@dest.test']]);
    expect(result.queueId).toBe(server.messages[0].queueId);
  });

  it('every recipient refused with 4xx (or 4xx and 5xx) → RelayUnavailableError that says who was refused for good', async () => {
    const relay = await start();
    server.recipientAnswers.set('busy@dest.test', { code: 450, text: '4.2.0 Greylisted' });
    server.recipientAnswers.set('full@dest.test', { code: 452, text: '4.2.2 Mailbox full' });
    server.recipientAnswers.set('gone@dest.test', { code: 550, text: '5.1.1 No such user' });

    const allTemporary = await failureOf(
      relay.submit(AUTH, plainMessage('later', ['busy@dest.test', 'full@dest.test'])),
    );
    expect(allTemporary).toBeInstanceOf(RelayUnavailableError);
    expect(allTemporary).toMatchObject({
      code: 450,
      response: '450 4.2.0 Greylisted',
      recipients: {
        rejected: [],
        deferred: [
          { email: 'busy@dest.test', code: 450, response: '450 4.2.0 Greylisted' },
          { email: 'full@dest.test', code: 452, response: '452 4.2.2 Mailbox full' },
        ],
      },
    });

    const mixed = await failureOf(
      relay.submit(AUTH, plainMessage('mixed', ['gone@dest.test', 'busy@dest.test'])),
    );
    expect(mixed).toBeInstanceOf(RelayUnavailableError);
    expect(mixed).toMatchObject({
      code: 450,
      recipients: {
        rejected: [{ email: 'gone@dest.test', code: 550, response: '550 5.1.1 No such user' }],
        deferred: [{ email: 'busy@dest.test', code: 450, response: '450 4.2.0 Greylisted' }],
      },
    });
    expect(server.messages).toEqual([]);
  });

  it('every recipient refused with 5xx → RelayRefusedError with the first answer', async () => {
    const relay = await start();
    server.recipientAnswers.set('gone@dest.test', { code: 550, text: '5.1.1 No such user' });
    server.recipientAnswers.set('bad@dest.test', { code: 553, text: '5.1.3 Bad address' });
    const err = await failureOf(
      relay.submit(AUTH, plainMessage('never', ['gone@dest.test', 'bad@dest.test'])),
    );
    expect(err).toBeInstanceOf(RelayRefusedError);
    expect(err).toMatchObject({
      code: 550,
      response: '550 5.1.1 No such user',
      recipients: {
        rejected: [
          { email: 'gone@dest.test', code: 550, response: '550 5.1.1 No such user' },
          { email: 'bad@dest.test', code: 553, response: '553 5.1.3 Bad address' },
        ],
        deferred: [],
      },
    });
  });

  it('AUTH refused with 535 → RelayRefusedError (code 535); with 454 → RelayUnavailableError', async () => {
    const relay = await start();
    server.refuseLogin = () => ({ code: 535, text: '5.7.8 Error: authentication failed' });
    const refused = await failureOf(relay.submit(AUTH, plainMessage('wrong token')));
    expect(refused).toBeInstanceOf(RelayRefusedError);
    expect(refused).toMatchObject({ code: 535, response: '535 5.7.8 Error: authentication failed' });
    expect((refused as Error).message).not.toContain(AUTH.pass);

    server.refuseLogin = () => ({ code: 454, text: '4.7.0 Temporary authentication failure' });
    const later = await failureOf(relay.submit(AUTH, plainMessage('auth down')));
    expect(later).toBeInstanceOf(RelayUnavailableError);
    expect(later).toMatchObject({ code: 454 });
    expect(server.messages).toEqual([]);
  });

  it('MAIL FROM or the end of the message answered 5xx → RelayRefusedError; 4xx → RelayUnavailableError', async () => {
    const relay = await start();
    server.mailFromAnswer = { code: 553, text: '5.7.1 <sender@acme.test>: Sender address rejected' };
    const sender = await failureOf(relay.submit(AUTH, plainMessage('bad sender')));
    expect(sender).toBeInstanceOf(RelayRefusedError);
    expect(sender).toMatchObject({
      code: 553,
      response: '553 5.7.1 <sender@acme.test>: Sender address rejected',
    });

    server.mailFromAnswer = { code: 451, text: '4.3.0 Try again later' };
    expect(await failureOf(relay.submit(AUTH, plainMessage('sender later')))).toBeInstanceOf(
      RelayUnavailableError,
    );
    server.mailFromAnswer = undefined;

    server.dataAnswer = { code: 550, text: '5.7.1 From: header of another company' };
    const content = await failureOf(relay.submit(AUTH, plainMessage('bad content')));
    expect(content).toBeInstanceOf(RelayRefusedError);
    expect(content).toMatchObject({ code: 550, response: '550 5.7.1 From: header of another company' });

    server.dataAnswer = { code: 451, text: '4.7.1 Service unavailable - try again later' };
    const milterDown = await failureOf(relay.submit(AUTH, plainMessage('milter down')));
    expect(milterDown).toBeInstanceOf(RelayUnavailableError);
    expect(milterDown).toMatchObject({ code: 451 });
  });

  it('a relay that offers no AUTH is not sent mail unauthenticated: AUTH is tried anyway and its refusal is RelayUnavailableError', async () => {
    server = await new SubmissionServer({ withoutAuth: true }).start();
    submitter = new RelaySubmitter({ url: server.url, logger: recordingLogger(logLines) });
    const err = await failureOf(submitter.submit(AUTH, plainMessage('no auth')));
    expect(err).toBeInstanceOf(RelayUnavailableError);
    // smtp-server says 500 (command not recognized), Postfix 503 (authentication not enabled).
    expect(err).toMatchObject({ code: 500 });
    expect(server.logins).toEqual([]);
    expect(server.messages).toEqual([]);
  });

  it('nothing listening on the port → RelayUnavailableError without a code', async () => {
    server = await new SubmissionServer().start();
    submitter = new RelaySubmitter({
      url: `smtp://127.0.0.1:${await freePort()}`,
      logger: recordingLogger(logLines),
    });
    const err = await failureOf(submitter.submit(AUTH, plainMessage('nobody home')));
    expect(err).toBeInstanceOf(RelayUnavailableError);
    expect(err).toMatchObject({ code: null, response: null });
    expect((err as Error).message).toContain('ECONNREFUSED');
  });

  it('a greeting of 421 → RelayUnavailableError with code 421', async () => {
    server = await new SubmissionServer({
      greeting: { code: 421, text: 'relay.test Service not available' },
    }).start();
    submitter = new RelaySubmitter({ url: server.url, logger: recordingLogger(logLines) });
    const err = await failureOf(submitter.submit(AUTH, plainMessage('go away')));
    expect(err).toBeInstanceOf(RelayUnavailableError);
    expect(err).toMatchObject({ code: 421, response: '421 relay.test Service not available' });
  });

  it("reuses one logged-in connection for a user's submissions, gives another user its own, and close() closes them all", async () => {
    const relay = await start();
    await relay.submit(AUTH, plainMessage('first'));
    await relay.submit(AUTH, plainMessage('second'));
    expect(server.opened).toHaveLength(1);
    expect(server.logins).toHaveLength(1);
    expect(new Set(server.messages.map((m) => m.sessionId))).toEqual(new Set(server.opened));

    await relay.submit({ user: 'other-relay', pass: 'token-other' }, plainMessage('third'));
    expect(server.opened).toHaveLength(2);
    expect(server.logins.map((l) => l.user)).toEqual([AUTH.user, 'other-relay']);
    expect(server.messages.map((m) => m.user)).toEqual([AUTH.user, AUTH.user, 'other-relay']);
    expect(server.closed).toEqual([]);
    expect(logLines).toEqual(
      expect.arrayContaining([expect.stringContaining('Relay pool opened for other-relay')]),
    );

    await relay.close();
    await until(() => server.closed.length === 2, 'both connections are closed');
    expect(new Set(server.closed)).toEqual(new Set(server.opened));
  });

  it('submissions sent together share at most maxConnectionsPerUser connections', async () => {
    const relay = await start({ maxConnectionsPerUser: 2 });
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => relay.submit(AUTH, plainMessage(`burst ${i}`))),
    );
    expect(new Set(results.map((r) => r.queueId)).size).toBe(12);
    expect(server.messages).toHaveLength(12);
    expect(server.opened.length).toBeLessThanOrEqual(2);
    expect(server.logins.length).toBe(server.opened.length);
  });

  it("keeps a user's connections while their password is young, and opens new ones with a newer password after passRefreshMs", async () => {
    const young = await start();
    await young.submit({ user: AUTH.user, pass: 'token-one' }, plainMessage('one'));
    await young.submit({ user: AUTH.user, pass: 'token-two' }, plainMessage('two'));
    expect(server.logins.map((l) => l.pass)).toEqual(['token-one']);
    await young.close();
    await until(() => server.closed.length === 1, 'the connection is closed');

    const refreshed = new RelaySubmitter({
      url: server.url,
      logger: recordingLogger(logLines),
      passRefreshMs: 0,
    });
    submitter = refreshed;
    await refreshed.submit({ user: AUTH.user, pass: 'token-three' }, plainMessage('three'));
    await refreshed.submit({ user: AUTH.user, pass: 'token-four' }, plainMessage('four'));
    expect(server.logins.map((l) => l.pass)).toEqual(['token-one', 'token-three', 'token-four']);
    // The replaced pool closed its connection once its submission was done.
    await until(() => server.closed.length === 2, "the replaced pool's connection is closed");
    expect(server.closed[1]).toBe(server.logins[1].sessionId);
  });

  it('a login refused for an older password is retried once with the password given now', async () => {
    const relay = await start();
    server.refuseLogin = (_user, pass) =>
      pass === 'token-old' ? { code: 535, text: '5.7.8 Error: authentication failed' } : undefined;
    // Both find the same (new) pool, opened with the first one's password.
    const withOld = relay.submit({ user: AUTH.user, pass: 'token-old' }, plainMessage('old'));
    const withNew = relay.submit({ user: AUTH.user, pass: 'token-new' }, plainMessage('new'));
    expect(await failureOf(withOld)).toBeInstanceOf(RelayRefusedError);
    const result = await withNew;
    expect(result.queueId).toBe(server.messages[0].queueId);
    expect(server.messages.map((m) => m.rcptTo)).toEqual([['rcpt@dest.test']]);
    expect(server.logins.map((l) => l.pass).filter((p) => p === 'token-new')).toEqual(['token-new']);
  });

  it('keeps the pools of maxUsers users, closing the least recently used', async () => {
    const relay = await start({ maxUsers: 1 });
    await relay.submit({ user: 'first-relay', pass: 'token-a' }, plainMessage('a'));
    await relay.submit({ user: 'second-relay', pass: 'token-b' }, plainMessage('b'));
    await until(() => server.closed.length === 1, "the first user's connection is closed");
    expect(server.closed).toEqual([server.messages[0].sessionId]);
    expect(server.opened).toHaveLength(2);
  });

  it('close() lets a submission under way finish, and refuses later ones as RelayUnavailableError', async () => {
    const relay = await start();
    const underWay = relay.submit(AUTH, plainMessage('in flight'));
    const closing = relay.close();
    const result = await underWay;
    await closing;
    expect(result.queueId).toBe(server.messages[0].queueId);
    await until(() => server.closed.length === 1, 'the connection is closed');
    expect(await failureOf(relay.submit(AUTH, plainMessage('too late')))).toBeInstanceOf(
      RelayUnavailableError,
    );
  });
});
