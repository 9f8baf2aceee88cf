import { parsePostfixMessage, parseSyslogLine, remoteQueueIdOf } from './postfix-line';

const NOW = new Date('2026-11-22T12:00:00Z');
const UTC = { now: NOW, timeZone: 'UTC' };

/** Syslog split, then the Postfix message: what the ingest does with one line. */
const event = (line: string) => {
  const syslog = parseSyslogLine(line, UTC);
  return syslog && parsePostfixMessage(syslog.program, syslog.message);
};

describe('parseSyslogLine', () => {
  it('reads a BSD time with the year nearest to now, the host, program and pid', () => {
    expect(
      parseSyslogLine('Nov 21 18:58:35 mx1 postfix/smtpd[22590]: AA10A2839B: client=h[1.2.3.4]', UTC),
    ).toEqual({
      at: new Date('2026-11-21T18:58:35Z'),
      host: 'mx1',
      program: 'postfix/smtpd',
      pid: 22590,
      message: 'AA10A2839B: client=h[1.2.3.4]',
    });
  });

  it('puts a December line read on 1 January in the year before, and a January line read on 31 December in the next', () => {
    expect(
      parseSyslogLine('Dec 31 23:59:59 h postfix/qmgr[1]: x', {
        now: new Date('2027-01-01T00:05:00Z'),
        timeZone: 'UTC',
      })?.at,
    ).toEqual(new Date('2026-12-31T23:59:59Z'));
    expect(
      parseSyslogLine('Jan  1 00:00:10 h postfix/qmgr[1]: x', {
        now: new Date('2026-12-31T23:58:00Z'),
        timeZone: 'UTC',
      })?.at,
    ).toEqual(new Date('2027-01-01T00:00:10Z'));
  });

  it('reads a time without a zone in LOG_TIMEZONE', () => {
    expect(
      parseSyslogLine('Nov 21 18:58:35 mx1 postfix/smtpd[1]: x', { now: NOW, timeZone: 'Asia/Jakarta' })?.at,
    ).toEqual(new Date('2026-11-21T11:58:35Z'));
    expect(
      parseSyslogLine('2026-11-21T18:58:35 mx1 postfix/smtpd[1]: x', { now: NOW, timeZone: 'Asia/Jakarta' })
        ?.at,
    ).toEqual(new Date('2026-11-21T11:58:35Z'));
  });

  it('reads RFC 3339 times with an offset, with Z, and with a fraction', () => {
    expect(parseSyslogLine('2026-11-21T18:58:35.123456+07:00 mx1 postfix/smtp[9]: x', UTC)?.at).toEqual(
      new Date('2026-11-21T11:58:35.123Z'),
    );
    expect(parseSyslogLine('2026-11-21T18:58:35Z mx1 postfix/smtp[9]: x', UTC)?.at).toEqual(
      new Date('2026-11-21T18:58:35Z'),
    );
  });

  it('parses a line without a time, and refuses what is not syslog', () => {
    expect(parseSyslogLine('mx1 postfix/qmgr[15878]: AA10A2839B: removed', UTC)).toEqual({
      host: 'mx1',
      program: 'postfix/qmgr',
      pid: 15878,
      message: 'AA10A2839B: removed',
    });
    for (const junk of ['', 'hello world', '{"json":true}', 'Foo 99 99:99:99'])
      expect(parseSyslogLine(junk, UTC)).toBeNull();
  });
});

describe('parsePostfixMessage: every line form of the contract', () => {
  it('smtpd client with SASL', () => {
    expect(
      event(
        'Nov 21 18:58:35 mx postfix/smtpd[22590]: AA10A2839B: client=host.example[1.2.3.4], sasl_method=PLAIN, sasl_username=r-7f3k2q9d',
      ),
    ).toEqual({
      kind: 'client',
      queueId: 'AA10A2839B',
      clientHost: 'host.example',
      clientIp: '1.2.3.4',
      saslMethod: 'PLAIN',
      saslUsername: 'r-7f3k2q9d',
    });
  });

  it('smtpd client of a submission service, without SASL', () => {
    expect(
      event('Nov 21 18:58:35 mx postfix/submission/smtpd[7]: 4Dq3m53kSRz1xJ9: client=unknown[127.0.0.1]'),
    ).toEqual({
      kind: 'client',
      queueId: '4Dq3m53kSRz1xJ9',
      clientHost: 'unknown',
      clientIp: '127.0.0.1',
    });
  });

  it('cleanup message-id', () => {
    expect(
      event('Nov 21 18:58:35 mx postfix/cleanup[22599]: AA10A2839B: message-id=<FB62@example.com>'),
    ).toEqual({
      kind: 'message-id',
      queueId: 'AA10A2839B',
      messageId: 'FB62@example.com',
    });
  });

  it('qmgr from with size and nrcpt', () => {
    expect(
      event(
        'Nov 21 18:58:35 mx postfix/qmgr[15878]: AA10A2839B: from=<news@acme.co.id>, size=920, nrcpt=2 (queue active)',
      ),
    ).toEqual({
      kind: 'from',
      queueId: 'AA10A2839B',
      from: 'news@acme.co.id',
      size: 920,
      nrcpt: 2,
    });
  });

  it('sent, with orig_to and the next hop’s queue id', () => {
    expect(
      event(
        'Nov 21 18:58:35 mx postfix/smtp[301]: AA10A2839B: to=<jo@example.net>, orig_to=<all@acme.co.id>, relay=mx.example.net[10.74.103.11]:25, delay=11, delays=5.4/0.06/5.1/0.03, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as F12DF84004)',
      ),
    ).toEqual({
      kind: 'delivery',
      queueId: 'AA10A2839B',
      to: 'jo@example.net',
      origTo: 'all@acme.co.id',
      relay: 'mx.example.net[10.74.103.11]:25',
      delay: 11,
      delays: '5.4/0.06/5.1/0.03',
      dsn: '2.0.0',
      status: 'sent',
      response: '250 2.0.0 Ok: queued as F12DF84004',
      remoteQueueId: 'F12DF84004',
    });
  });

  it('bounced with a long multi-part response', () => {
    const e = event(
      'Nov 21 18:58:36 mx postfix/smtp[302]: AA10A2839B: to=<x@gmail.com>, relay=gmail-smtp-in.l.google.com[142.250.4.27]:25, delay=1.9, delays=0.1/0/0.5/1.3, dsn=5.1.1, status=bounced (host gmail-smtp-in.l.google.com[142.250.4.27] said: 550-5.1.1 The email account that you tried to reach does not exist (in reply to RCPT TO command))',
    );
    expect(e).toMatchObject({
      kind: 'delivery',
      to: 'x@gmail.com',
      dsn: '5.1.1',
      status: 'bounced',
      response:
        'host gmail-smtp-in.l.google.com[142.250.4.27] said: 550-5.1.1 The email account that you tried to reach does not exist (in reply to RCPT TO command)',
    });
    expect(e).not.toHaveProperty('remoteQueueId');
  });

  it('deferred with a 4.x.x dsn', () => {
    expect(
      event(
        'Nov 21 18:58:37 mx postfix/smtp[303]: BB20B3940C: to=<a@b.id>, relay=mx.b.id[1.2.3.5]:25, delay=2.3, delays=0.1/0/1/1.2, dsn=4.2.0, status=deferred (host mx.b.id[1.2.3.5] said: 450 4.2.0 Greylisted)',
      ),
    ).toMatchObject({
      kind: 'delivery',
      queueId: 'BB20B3940C',
      to: 'a@b.id',
      dsn: '4.2.0',
      status: 'deferred',
    });
  });

  it('qmgr expired and removed', () => {
    expect(
      event(
        'Nov 21 18:58:38 mx postfix/qmgr[15878]: CC30C4A51D: from=<>, status=expired, returned to sender',
      ),
    ).toEqual({
      kind: 'expired',
      queueId: 'CC30C4A51D',
      from: '',
    });
    expect(event('Nov 21 18:58:39 mx postfix/qmgr[15878]: AA10A2839B: removed')).toEqual({
      kind: 'removed',
      queueId: 'AA10A2839B',
    });
  });

  it('NOQUEUE reject', () => {
    expect(
      event(
        'Nov 21 18:58:40 mx postfix/smtpd[22590]: NOQUEUE: reject: RCPT from h[1.2.3.4]: 554 5.7.1 <x@y.z>: Relay access denied; from=<a@acme.co.id> to=<x@y.z> proto=ESMTP helo=<h>',
      ),
    ).toEqual({
      kind: 'noqueue-reject',
      stage: 'RCPT',
      clientHost: 'h',
      clientIp: '1.2.3.4',
      code: 554,
      dsn: '5.7.1',
      response: '<x@y.z>: Relay access denied',
      from: 'a@acme.co.id',
      to: 'x@y.z',
      proto: 'ESMTP',
      helo: 'h',
    });
  });
});

describe('parsePostfixMessage: real Postfix 3.7 output on these machines (../shared/postfix.md)', () => {
  const lines = [
    'Nov 22 02:41:47 vm postfix/smtpd[547]: C913716C112: client=unknown[127.0.0.1]',
    'Nov 22 02:41:47 vm postfix/cleanup[550]: C913716C112: message-id=<20261122024147.000544@vm>',
    'Nov 22 02:41:47 vm postfix/qmgr[533]: C913716C112: from=<news@acme.test>, size=360, nrcpt=1 (queue active)',
    'Nov 22 02:41:47 vm postfix/smtp[551]: C913716C112: to=<jo@example.net>, relay=127.0.0.1[127.0.0.1]:2526, delay=0.02, delays=0.01/0.01/0/0, dsn=2.0.0, status=sent (250 2.0.0 Ok)',
    'Nov 22 02:41:47 vm postfix/qmgr[533]: C913716C112: removed',
    'Nov 22 02:41:47 vm postfix/smtpd[547]: NOQUEUE: reject: RCPT from unknown[127.0.0.1]: 554 5.7.1 <jo@example.net>: Recipient address rejected: account suspended; from=<blocked@acme.test> to=<jo@example.net> proto=ESMTP helo=<vm>',
  ];

  it('understands every line of an accepted and a refused message', () => {
    expect(lines.map((l) => event(l)?.kind)).toEqual([
      'client',
      'message-id',
      'from',
      'delivery',
      'removed',
      'noqueue-reject',
    ]);
    expect(event(lines[3])).toMatchObject({ status: 'sent', delay: 0.02, response: '250 2.0.0 Ok' });
    expect(event(lines[5])).toMatchObject({
      code: 554,
      dsn: '5.7.1',
      from: 'blocked@acme.test',
      to: 'jo@example.net',
    });
  });

  it('skips what it does not use: other programs, other Postfix lines, garbage', () => {
    for (const line of [
      'Nov 22 02:41:47 vm postfix/smtpd[547]: connect from unknown[127.0.0.1]',
      'Nov 22 02:41:47 vm postfix/smtpd[547]: disconnect from unknown[127.0.0.1] ehlo=1 mail=1 rcpt=1 data=1 quit=1 commands=5',
      'Nov 22 02:41:47 vm postfix/master[531]: daemon started -- version 3.7.11, configuration /etc/postfix',
      'Nov 22 02:41:47 vm sshd[12]: Accepted publickey for root',
      'Nov 22 02:41:47 vm postfix/smtp[551]: C913716C112: to=<jo@example.net>, status=weird (x)',
    ]) {
      expect(event(line)).toBeNull();
    }
  });
});

describe('remoteQueueIdOf', () => {
  it.each([
    ['250 2.0.0 Ok: queued as F12DF84004', 'F12DF84004'],
    ['250 2.0.0 OK id=1qXyZ-0003Ab-7Q', '1qXyZ-0003Ab-7Q'],
    ['250 Ok: queued as <abc.def@mta.example>', 'abc.def@mta.example'],
    ['250 OK: message queued', undefined],
  ])('%s → %s', (response, id) => {
    expect(remoteQueueIdOf(response)).toBe(id);
  });
});
