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

describe('parseSyslogLine: the program part alone', () => {
  it('reads `program[pid]: message` with no host, with or without a time', () => {
    expect(parseSyslogLine('postfix/smtpd[22590]: AA10A2839B: client=h[1.2.3.4]', UTC)).toEqual({
      program: 'postfix/smtpd',
      pid: 22590,
      message: 'AA10A2839B: client=h[1.2.3.4]',
    });
    expect(parseSyslogLine('Nov 21 18:58:35 postfix/qmgr[1]: AA10A2839B: removed', UTC)).toEqual({
      at: new Date('2026-11-21T18:58:35Z'),
      program: 'postfix/qmgr',
      pid: 1,
      message: 'AA10A2839B: removed',
    });
    expect(parseSyslogLine('2026-11-21T18:58:35Z postfix-out/smtp: AA10A2839B: removed', UTC)).toEqual({
      at: new Date('2026-11-21T18:58:35Z'),
      program: 'postfix-out/smtp',
      message: 'AA10A2839B: removed',
    });
  });

  it('still reads a host whose program has no pid', () => {
    expect(parseSyslogLine('relay-1 postfix/qmgr: AA10A2839B: removed', UTC)).toEqual({
      host: 'relay-1',
      program: 'postfix/qmgr',
      message: 'AA10A2839B: removed',
    });
  });
});

describe('parseSyslogLine: times that do not exist', () => {
  it.each([
    'Feb 30 10:00:00 mx postfix/qmgr[1]: x',
    'Feb 31 10:00:00 mx postfix/qmgr[1]: x',
    'Apr 31 10:00:00 mx postfix/qmgr[1]: x',
    'Nov  0 10:00:00 mx postfix/qmgr[1]: x',
    'Nov 32 10:00:00 mx postfix/qmgr[1]: x',
    'Nov 21 24:00:00 mx postfix/qmgr[1]: x',
    'Nov 21 25:00:00 mx postfix/qmgr[1]: x',
    'Nov 21 18:60:00 mx postfix/qmgr[1]: x',
    'Nov 21 18:58:60 mx postfix/qmgr[1]: x',
    'Foo 21 18:58:35 mx postfix/qmgr[1]: x',
    // 2026 is the year nearest to NOW, and it is not a leap year.
    'Feb 29 10:00:00 mx postfix/qmgr[1]: x',
    '2026-13-01T10:00:00Z mx postfix/qmgr[1]: x',
    '2026-00-10T10:00:00Z mx postfix/qmgr[1]: x',
    '2026-01-32T10:00:00Z mx postfix/qmgr[1]: x',
    '2026-01-00T10:00:00Z mx postfix/qmgr[1]: x',
    '2026-02-29T10:00:00Z mx postfix/qmgr[1]: x',
    '2100-02-29T10:00:00Z mx postfix/qmgr[1]: x',
    '2026-02-30T10:00:00Z mx postfix/qmgr[1]: x',
    '2026-06-31T10:00:00Z mx postfix/qmgr[1]: x',
    '2026-11-21T24:00:00Z mx postfix/qmgr[1]: x',
    '2026-11-21T25:00:00Z mx postfix/qmgr[1]: x',
    '2026-11-21T18:60:00Z mx postfix/qmgr[1]: x',
    '2026-11-21T18:58:60Z mx postfix/qmgr[1]: x',
    '2026-11-21T18:58:35+24:00 mx postfix/qmgr[1]: x',
    '2026-11-21T18:58:35+07:60 mx postfix/qmgr[1]: x',
    'Feb 30 postfix/qmgr[1]: x',
  ])('%s is not a syslog line', (line) => {
    expect(parseSyslogLine(line, UTC)).toBeNull();
  });

  it('reads Feb 29 when the year nearest to now is a leap year', () => {
    const inLeapYear = { now: new Date('2028-03-10T00:00:00Z'), timeZone: 'UTC' };
    expect(parseSyslogLine('Feb 29 10:00:00 mx postfix/qmgr[1]: x', inLeapYear)?.at).toEqual(
      new Date('2028-02-29T10:00:00Z'),
    );
    // Read in January 2028, Feb 29 is nearest in 2028; read in the autumn of 2027, it is too.
    expect(
      parseSyslogLine('Feb 29 10:00:00 mx postfix/qmgr[1]: x', {
        now: new Date('2027-11-01T00:00:00Z'),
        timeZone: 'UTC',
      })?.at,
    ).toEqual(new Date('2028-02-29T10:00:00Z'));
    expect(
      parseSyslogLine('Feb 29 10:00:00 mx postfix/qmgr[1]: x', {
        now: new Date('2027-06-01T00:00:00Z'),
        timeZone: 'UTC',
      }),
    ).toBeNull();
    expect(parseSyslogLine('2028-02-29T10:00:00Z mx postfix/qmgr[1]: x', UTC)?.at).toEqual(
      new Date('2028-02-29T10:00:00Z'),
    );
    expect(parseSyslogLine('2000-02-29T10:00:00Z mx postfix/qmgr[1]: x', UTC)?.at).toEqual(
      new Date('2000-02-29T10:00:00Z'),
    );
  });

  it('reads the last second of a day and the last day of a month', () => {
    expect(parseSyslogLine('Sep 30 23:59:59 mx postfix/qmgr[1]: x', UTC)?.at).toEqual(
      new Date('2026-09-30T23:59:59Z'),
    );
    expect(parseSyslogLine('2026-12-31T23:59:59-23:59 mx postfix/qmgr[1]: x', UTC)?.at).toEqual(
      new Date('2027-01-01T23:58:59Z'),
    );
  });
});

/** The example lines of integrations.md "Log shipper", as a record carrying only the program's part sends them. */
const CONTRACT_LINES = [
  'postfix/smtpd[22590]: AA10A2839B: client=host.example[1.2.3.4], sasl_method=PLAIN, sasl_username=r-7f3k2q9d',
  'postfix/cleanup[22599]: AA10A2839B: message-id=<FB62@example.com>',
  'postfix/qmgr[15878]: AA10A2839B: from=<news@acme.co.id>, size=920, nrcpt=2 (queue active)',
  'postfix/smtp[301]: AA10A2839B: to=<jo@example.net>, orig_to=<all@acme.co.id>, relay=mx.example.net[10.74.103.11]:25, delay=11, delays=5.4/0.06/5.1/0.03, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as F12DF84004)',
  'postfix/smtp[302]: AA10A2839B: to=<x@gmail.com>, relay=gmail-smtp-in.l.google.com[142.250.4.27]:25, delay=1.9, delays=0.1/0/0.5/1.3, dsn=5.1.1, status=bounced (host gmail-smtp-in.l.google.com[142.250.4.27] said: 550-5.1.1 The email account that you tried to reach does not exist (in reply to RCPT TO command))',
  'postfix/smtp[303]: BB20B3940C: to=<a@b.id>, relay=mx.b.id[1.2.3.5]:25, delay=2.3, delays=0.1/0/1/1.2, dsn=4.2.0, status=deferred (host mx.b.id[1.2.3.5] said: 450 4.2.0 Greylisted)',
  'postfix/qmgr[15878]: CC30C4A51D: from=<>, status=expired, returned to sender',
  'postfix/qmgr[15878]: AA10A2839B: removed',
  'postfix/smtpd[22590]: NOQUEUE: reject: RCPT from h[1.2.3.4]: 554 5.7.1 <x@y.z>: Relay access denied; from=<a@acme.co.id> to=<x@y.z> proto=ESMTP helo=<h>',
];

describe('the three line forms of integrations.md give the same events', () => {
  it.each(CONTRACT_LINES)('%s', (part) => {
    const forms = [
      `Nov 21 18:58:35 relay-1 ${part}`,
      `2026-11-21T18:58:35Z relay-1 ${part}`,
      `relay-1 ${part}`,
      `Nov 21 18:58:35 ${part}`,
      part,
    ].map((line) => parseSyslogLine(line, UTC));
    const split = (hasTime: boolean, hasHost: boolean) => ({
      ...(hasTime && { at: new Date('2026-11-21T18:58:35Z') }),
      ...(hasHost && { host: 'relay-1' }),
      program: /^[^[]+/.exec(part)![0],
      pid: Number(/\[(\d+)\]/.exec(part)![1]),
      message: part.slice(part.indexOf(': ') + 2),
    });
    expect(forms).toEqual([
      split(true, true),
      split(true, true),
      split(false, true),
      split(true, false),
      split(false, false),
    ]);
    const events = forms.map((syslog) => parsePostfixMessage(syslog!.program, syslog!.message));
    expect(events[0]).not.toBeNull();
    for (const e of events) expect(e).toEqual(events[0]);
  });

  it('understands every example line', () => {
    expect(CONTRACT_LINES.map((line) => event(line)?.kind)).toEqual([
      'client',
      'message-id',
      'from',
      'delivery',
      'delivery',
      'delivery',
      'expired',
      'removed',
      'noqueue-reject',
    ]);
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
    // The reply names no id of the next hop's.
    expect(e).toMatchObject({ remoteQueueId: undefined });
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

describe('parsePostfixMessage: real Postfix 3.7 output on these machines (docs/postfix-notes.md)', () => {
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

/** The message of a program's part, as the ingest reads it. */
const message = (part: string) => {
  const syslog = parseSyslogLine(part, UTC)!;
  return parsePostfixMessage(syslog.program, syslog.message);
};

describe('who sent it: identity only from the client line Postfix writes', () => {
  it.each([
    ['client=h[1.2.3.4]', { clientHost: 'h', clientIp: '1.2.3.4' }],
    [
      'client=mail.acme.test[2001:DB8::25], sasl_method=LOGIN, sasl_username=r-7f3k2q9d',
      {
        clientHost: 'mail.acme.test',
        clientIp: '2001:db8::25',
        saslMethod: 'LOGIN',
        saslUsername: 'r-7f3k2q9d',
      },
    ],
    [
      'client=unknown[::ffff:192.0.2.1]:41234, sasl_method=PLAIN, sasl_username=r-7f3k2q9d, sasl_sender=news+2Bx@acme.test',
      { clientHost: 'unknown', clientIp: '192.0.2.1', saslMethod: 'PLAIN', saslUsername: 'r-7f3k2q9d' },
    ],
    [
      'client=h[1.2.3.4], sasl_method=PLAIN, sasl_username=user@acme.test, orig_queue_id=9F1A2B3C4D, orig_client=out.acme.test[198.51.100.7]',
      { clientHost: 'h', clientIp: '1.2.3.4', saslMethod: 'PLAIN', saslUsername: 'user@acme.test' },
    ],
    [
      'client=h[1.2.3.4], orig_queue_id=9F1A2B3C4D, orig_client=out.acme.test[198.51.100.7]',
      { clientHost: 'h', clientIp: '1.2.3.4' },
    ],
    // sasl_sender= is the raw AUTH= parameter of MAIL FROM (issue 29 item 4): the username is the
    // first sasl_username=, right after sasl_method=; sasl_sender runs to the end of the line.
    [
      // MAIL FROM:<x@A> AUTH=x,sasl_username=r-B from a client authenticated as r-A.
      'client=h[1.2.3.4], sasl_method=PLAIN, sasl_username=r-A, sasl_sender=x,sasl_username=r-B',
      { clientHost: 'h', clientIp: '1.2.3.4', saslMethod: 'PLAIN', saslUsername: 'r-A' },
    ],
    [
      // MAIL FROM:<> AUTH=a=b from a client without AUTH (allowed by its IP).
      'client=h[1.2.3.4], sasl_sender=a=b',
      { clientHost: 'h', clientIp: '1.2.3.4' },
    ],
    [
      'client=h[1.2.3.4], sasl_method=LOGIN, sasl_username=r-A, sasl_sender=x, sasl_username=r-B',
      { clientHost: 'h', clientIp: '1.2.3.4', saslMethod: 'LOGIN', saslUsername: 'r-A' },
    ],
    ['client=h[1.2.3.4], sasl_sender=x, sasl_username=r-B', { clientHost: 'h', clientIp: '1.2.3.4' }],
    [
      'client=h[1.2.3.4], sasl_sender=, sasl_method=PLAIN, sasl_username=r-B',
      { clientHost: 'h', clientIp: '1.2.3.4' },
    ],
    [
      'client=h[1.2.3.4], sasl_method=PLAIN, sasl_username=r-A, sasl_sender=a=b,c, orig_queue_id=9F1A2B3C4D, orig_client=out.acme.test[198.51.100.7]',
      { clientHost: 'h', clientIp: '1.2.3.4', saslMethod: 'PLAIN', saslUsername: 'r-A' },
    ],
    [
      'client=mail.acme.test[2001:db8::25]:41234, sasl_method=PLAIN, sasl_username=r-A, sasl_sender=x=, sasl_username=r-B',
      {
        clientHost: 'mail.acme.test',
        clientIp: '2001:db8::25',
        saslMethod: 'PLAIN',
        saslUsername: 'r-A',
      },
    ],
    [
      'client=unknown[2001:DB8::9], sasl_sender=<>=sasl_username=r-B',
      { clientHost: 'unknown', clientIp: '2001:db8::9' },
    ],
  ])('QID: %s', (text, identity) => {
    expect(message(`postfix/smtpd[1]: AB12CD34EF: ${text}`)).toEqual({
      kind: 'client',
      queueId: 'AB12CD34EF',
      ...identity,
    });
  });

  const forged = [
    // In a quoted MAIL FROM local part.
    'postfix/smtpd[1]: AB12CD34EF: reject: RCPT from h[1.2.3.4]: 450 4.1.2 <bad@nowhere>: Recipient address rejected: Domain not found; from=<"a>, client=h[1.2.3.4], sasl_username=r-victim, b="@own.test> to=<bad@nowhere> proto=ESMTP helo=<h>',
    // In the reply text, which echoes the recipient.
    'postfix/smtpd[1]: AB12CD34EF: reject: RCPT from h[1.2.3.4]: 550 5.1.1 <"x, client=h[1.2.3.4], sasl_method=PLAIN, sasl_username=r-victim"@own.test>: Recipient address rejected: User unknown; from=<a@own.test> to=<"x, client=h[1.2.3.4], sasl_method=PLAIN, sasl_username=r-victim"@own.test> proto=ESMTP helo=<h>',
    // In the HELO name.
    'postfix/smtpd[1]: AB12CD34EF: reject: RCPT from h[1.2.3.4]: 554 5.7.1 <x@y.z>: Relay access denied; from=<a@own.test> to=<x@y.z> proto=ESMTP helo=<h, client=h[1.2.3.4], sasl_method=PLAIN, sasl_username=r-victim>',
    // In smtpd lines that are not refusals.
    'postfix/smtpd[1]: AB12CD34EF: warn: RCPT from h[1.2.3.4]: watch; from=<"client=h[1.2.3.4], sasl_username=r-victim"@own.test> to=<x@y.z> proto=ESMTP helo=<h>',
    'postfix/smtpd[1]: AB12CD34EF: hold: RCPT from h[1.2.3.4]: <x@y.z>: held; from=<a@own.test> to=<x@y.z> proto=ESMTP helo=<client=h[1.2.3.4], sasl_username=r-victim>',
    'postfix/smtpd[1]: AB12CD34EF: filter: RCPT from h[1.2.3.4]: <x@y.z>: x; from=<a@own.test> to=<x@y.z> proto=SMTP helo=<h>, client=h[1.2.3.4], sasl_username=r-victim',
    'postfix/smtpd[1]: NOQUEUE: reject: RCPT from h[1.2.3.4]: 554 5.7.1 <x@y.z>: Relay access denied; from=<"a>, client=h[1.2.3.4], sasl_username=r-victim, b="@own.test> to=<x@y.z> proto=ESMTP helo=<h>',
    'postfix/cleanup[2]: AB12CD34EF: milter-reject: END-OF-MESSAGE from h[1.2.3.4]: 5.7.1 client=h[1.2.3.4], sasl_username=r-victim; from=<a@own.test> to=<x@y.z> proto=ESMTP helo=<client=h[1.2.3.4], sasl_username=r-victim>',
    'postfix/qmgr[3]: AB12CD34EF: from=<"x, client=h[1.2.3.4], sasl_username=r-victim"@own.test>, size=920, nrcpt=1 (queue active)',
    'postfix/smtp[4]: AB12CD34EF: to=<"x, client=h[1.2.3.4], sasl_username=r-victim"@y.z>, relay=mx.y.z[1.2.3.5]:25, delay=1, delays=0/0/0/1, dsn=2.0.0, status=sent (250 client=h[1.2.3.4], sasl_username=r-victim)',
  ];

  it.each(forged)('%s makes no client event and no SASL username', (part) => {
    const e = message(part) ?? {};
    expect(e).not.toHaveProperty('kind', 'client');
    expect(e).not.toHaveProperty('saslUsername');
    expect(e).not.toHaveProperty('saslMethod');
  });

  it('reads a forged MAIL FROM whole, as data', () => {
    expect(message(forged[0])).toEqual({
      kind: 'queue-reject',
      queueId: 'AB12CD34EF',
      stage: 'RCPT',
      clientHost: 'h',
      clientIp: '1.2.3.4',
      code: 450,
      dsn: '4.1.2',
      response: '<bad@nowhere>: Recipient address rejected: Domain not found',
      from: '"a>, client=h[1.2.3.4], sasl_username=r-victim, b="@own.test',
      to: 'bad@nowhere',
      proto: 'ESMTP',
      helo: 'h',
    });
    expect(message(forged[6])).toMatchObject({
      kind: 'noqueue-reject',
      from: '"a>, client=h[1.2.3.4], sasl_username=r-victim, b="@own.test',
      to: 'x@y.z',
    });
    expect(message(forged[2])).toMatchObject({
      helo: 'h, client=h[1.2.3.4], sasl_method=PLAIN, sasl_username=r-victim',
    });
    expect(message(forged[8])).toMatchObject({
      kind: 'from',
      from: '"x, client=h[1.2.3.4], sasl_username=r-victim"@own.test',
    });
  });

  it('is not a client line when anything but Postfix’s own fields follows', () => {
    for (const text of [
      'client=h[1.2.3.4] sasl_username=r-victim',
      'client=h[1.2.3.4], helo=<x>',
      'client=h[1.2.3.4]; sasl_username=r-victim',
      'client=h [1.2.3.4], sasl_username=r-victim',
      'x client=h[1.2.3.4], sasl_username=r-victim',
      // sasl_username= only right after sasl_method=, as Postfix writes it.
      'client=h[1.2.3.4], sasl_username=r-victim',
      'client=h[1.2.3.4], orig_queue_id=9F1A2B3C4D, sasl_username=r-victim',
      'client=h[1.2.3.4], sasl_method=PLAIN, sasl_username=r-A, sasl_username=r-victim',
      'client=h[1.2.3.4], sasl_method=PLAIN, sasl_username=r-A, r-victim',
    ])
      expect([text, message(`postfix/smtpd[1]: AB12CD34EF: ${text}`)]).toEqual([text, null]);
  });
});

describe('refusals in an open transaction (queue-reject)', () => {
  it('reads one recipient refused at RCPT', () => {
    expect(
      message(
        'postfix/submission/smtpd[7]: 4Dq3m53kSRz1xJ9: reject: RCPT from unknown[2001:db8::9]: 550 5.1.1 <nobody@y.z>: Recipient address rejected: User unknown in virtual mailbox table; from=<news@acme.test> to=<nobody@y.z> proto=ESMTP helo=<mail.acme.test> sasl_method=PLAIN sasl_username=r-7f3k2q9d',
      ),
    ).toEqual({
      kind: 'queue-reject',
      queueId: '4Dq3m53kSRz1xJ9',
      stage: 'RCPT',
      clientHost: 'unknown',
      clientIp: '2001:db8::9',
      code: 550,
      dsn: '5.1.1',
      response: '<nobody@y.z>: Recipient address rejected: User unknown in virtual mailbox table',
      from: 'news@acme.test',
      to: 'nobody@y.z',
      proto: 'ESMTP',
      helo: 'mail.acme.test',
    });
  });

  it('reads cleanup’s milter-reject at END-OF-MESSAGE, which has no reply code', () => {
    expect(
      message(
        'postfix/cleanup[22599]: AA10A2839B: milter-reject: END-OF-MESSAGE from h[1.2.3.4]: 5.7.1 Spam message rejected; from=<news@acme.test> to=<jo@example.net> proto=ESMTP helo=<h>',
      ),
    ).toEqual({
      kind: 'queue-reject',
      queueId: 'AA10A2839B',
      stage: 'END-OF-MESSAGE',
      clientHost: 'h',
      clientIp: '1.2.3.4',
      dsn: '5.7.1',
      response: 'Spam message rejected',
      from: 'news@acme.test',
      to: 'jo@example.net',
      proto: 'ESMTP',
      helo: 'h',
    });
  });

  it('reads smtpd’s milter-reject (with the reply code) and other stages', () => {
    expect(
      message(
        'postfix/smtpd[1]: AA10A2839B: milter-reject: DATA content from h[1.2.3.4]: 451 4.7.1 Try again later; from=<> to=<jo@example.net> proto=ESMTP helo=<h> sasl_username=<r-7f3k2q9d>',
      ),
    ).toEqual({
      kind: 'queue-reject',
      queueId: 'AA10A2839B',
      stage: 'DATA content',
      clientHost: 'h',
      clientIp: '1.2.3.4',
      code: 451,
      dsn: '4.7.1',
      response: 'Try again later',
      from: '',
      to: 'jo@example.net',
      proto: 'ESMTP',
      helo: 'h',
    });
    expect(
      message(
        'postfix/smtpd[1]: AA10A2839B: reject: END-OF-MESSAGE from h[1.2.3.4]: 554 5.7.1 Message refused; from=<a@b.c> proto=ESMTP helo=<h>',
      ),
    ).toEqual({
      kind: 'queue-reject',
      queueId: 'AA10A2839B',
      stage: 'END-OF-MESSAGE',
      clientHost: 'h',
      clientIp: '1.2.3.4',
      code: 554,
      dsn: '5.7.1',
      response: 'Message refused',
      from: 'a@b.c',
      proto: 'ESMTP',
      helo: 'h',
    });
  });

  it('is not read from a program that does not write it, or without a sender', () => {
    for (const part of [
      'postfix/cleanup[2]: AA10A2839B: reject: END-OF-MESSAGE from h[1.2.3.4]: 5.7.1 x; from=<a@b.c> to=<d@e.f> proto=ESMTP helo=<h>',
      'postfix/qmgr[2]: AA10A2839B: reject: RCPT from h[1.2.3.4]: 550 5.1.1 x; from=<a@b.c> to=<d@e.f> proto=ESMTP helo=<h>',
      'postfix/smtpd[1]: AA10A2839B: reject: DATA from h[1.2.3.4]: 421 4.3.0 mx Server local data error',
      'postfix/smtpd[1]: NOQUEUE: milter-reject: RCPT from h[1.2.3.4]: 550 5.7.1 x; from=<a@b.c> to=<d@e.f> proto=ESMTP helo=<h>',
    ])
      expect([part, message(part)]).toEqual([part, null]);
  });

  it('reads a MAIL FROM and a recipient that hold `>`, `, ` and field names whole', () => {
    const from = '"x> y, to=<z>, size=1, sasl_username=r-victim"@own.test';
    const to = '"p> q, orig_to=<r>, relay=s"@y.z';
    expect(
      message(
        `postfix/smtpd[1]: AA10A2839B: reject: RCPT from h[1.2.3.4]: 550 5.1.1 <${to}>: User unknown; from=<${from}> to=<${to}> proto=ESMTP helo=<h> x>`,
      ),
    ).toMatchObject({ from, to, response: `<${to}>: User unknown`, helo: 'h> x' });
  });
});

describe('senders and recipients that hold `>` and `, ` are read whole', () => {
  const sender = '"a>, size=1, nrcpt=9 (x), status=expired, b"@acme.test';
  const recipient = '"c>, relay=e, f"@y.z';
  const original = '"g>, h, relay=i"@y.z';

  it('qmgr: up to the last `>, size=` or `>, status=expired`', () => {
    expect(
      message(`postfix/qmgr[3]: AA10A2839B: from=<${sender}>, size=920, nrcpt=2 (queue active)`),
    ).toEqual({
      kind: 'from',
      queueId: 'AA10A2839B',
      from: sender,
      size: 920,
      nrcpt: 2,
    });
    expect(
      message(`postfix/qmgr[3]: AA10A2839B: from=<${sender}>, status=expired, returned to sender`),
    ).toEqual({
      kind: 'expired',
      queueId: 'AA10A2839B',
      from: sender,
    });
    expect(
      message('postfix/qmgr[3]: AA10A2839B: from=<a@b.c>, status=force-expired, returned to sender'),
    ).toEqual({
      kind: 'expired',
      queueId: 'AA10A2839B',
      from: 'a@b.c',
    });
  });

  // A recipient holding `>, orig_to=<` or `>, relay=x, delay=` itself cannot be told apart from
  // Postfix's fields: it is cut there (its own record's data, never identity).
  it('delivery: up to the `>` that `, orig_to=<` or `, relay=…, delay=` follows', () => {
    expect(
      message(
        `postfix/smtp[4]: AA10A2839B: to=<${recipient}>, orig_to=<${original}>, relay=mx.y.z[1.2.3.5]:25, conn_use=2, delay=1.5, delays=0.1/0/0.4/1, dsn=2.0.0, status=sent (250 2.0.0 Ok, queued as F12DF84004)`,
      ),
    ).toEqual({
      kind: 'delivery',
      queueId: 'AA10A2839B',
      to: recipient,
      origTo: original,
      relay: 'mx.y.z[1.2.3.5]:25',
      delay: 1.5,
      delays: '0.1/0/0.4/1',
      dsn: '2.0.0',
      status: 'sent',
      response: '250 2.0.0 Ok, queued as F12DF84004',
      remoteQueueId: 'F12DF84004',
    });
    expect(
      message(
        `postfix/local[5]: AA10A2839B: to=<${recipient}>, relay=local, delay=0.1, delays=0/0/0/0.1, dsn=5.1.1, status=bounced (unknown user: "c")`,
      ),
    ).toMatchObject({ to: recipient, relay: 'local', status: 'bounced', response: 'unknown user: "c"' });
  });

  it('cleanup: a message-id holding `>`', () => {
    expect(message('postfix/cleanup[2]: AA10A2839B: message-id=<a>b@c>')).toEqual({
      kind: 'message-id',
      queueId: 'AA10A2839B',
      messageId: 'a>b@c',
    });
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
