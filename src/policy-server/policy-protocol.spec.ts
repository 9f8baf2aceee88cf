import {
  policyAction,
  postfixAction,
  formatReply,
  MAX_REQUEST_BYTES,
  PolicyProtocolError,
  PolicyRequestParser,
  toRelayQuery,
} from './policy-protocol';

const RCPT = [
  'request=smtpd_access_policy',
  'protocol_state=RCPT',
  'protocol_name=ESMTP',
  'client_address=192.0.2.7',
  'client_name=mail.acme.test',
  'helo_name=mail.acme.test',
  'sender=news@acme.test',
  'recipient=jo@example.net',
  'sasl_username=r-7f3k2q9d',
  'size=20480',
  'instance=123.456.7',
  '',
  '',
].join('\n');

/** Pushes the chunk and takes every request it completes. */
function take(parser: PolicyRequestParser, chunk: string) {
  parser.push(chunk);
  const requests = [];
  for (let request; (request = parser.next()) !== null;) requests.push(request);
  return requests;
}

describe('PolicyRequestParser', () => {
  it('parses one request ended by an empty line', () => {
    const [request, ...rest] = take(new PolicyRequestParser(), RCPT);
    expect(rest).toEqual([]);
    expect(Object.fromEntries(request)).toMatchObject({
      request: 'smtpd_access_policy',
      protocol_state: 'RCPT',
      sender: 'news@acme.test',
      sasl_username: 'r-7f3k2q9d',
    });
  });

  it('accepts CRLF, requests split across chunks at any byte, and several requests in one chunk', () => {
    const text = (RCPT + RCPT.replace('jo@', 'al@')).replace(/\n/g, '\r\n');
    for (let cut = 1; cut < text.length; cut += 7) {
      const parser = new PolicyRequestParser();
      const requests = [...take(parser, text.slice(0, cut)), ...take(parser, text.slice(cut))];
      expect(requests.map((r) => r.get('recipient'))).toEqual(['jo@example.net', 'al@example.net']);
    }
  });

  it('keeps `=` inside values and empty values, and ignores lines without `=`', () => {
    const [request] = take(new PolicyRequestParser(), 'ccert_subject=CN=a=b\nsender=\nnonsense\n\n');
    expect(request.get('ccert_subject')).toBe('CN=a=b');
    expect(request.get('sender')).toBe('');
    expect(request.has('nonsense')).toBe(false);
  });

  it('refuses a request over 64 KB, whole lines or not', () => {
    expect(() => take(new PolicyRequestParser(), `a=${'x'.repeat(MAX_REQUEST_BYTES)}`)).toThrow(
      PolicyProtocolError,
    );
    const parser = new PolicyRequestParser();
    expect(() => {
      for (let i = 0; i < 2000; i++) take(parser, `name${i}=${'y'.repeat(40)}\n`);
    }).toThrow(PolicyProtocolError);
  });

  it('refuses an empty request: an empty line ends a request only after an attribute', () => {
    for (const text of ['\n', '\r\n', `${RCPT}\n`, 'nonsense\n\n']) {
      const parser = new PolicyRequestParser();
      expect(() => take(parser, text)).toThrow(new PolicyProtocolError('Empty policy request'));
    }
  });

  it('gives the requests of a chunk one at a time, keeping the rest for later', () => {
    const parser = new PolicyRequestParser();
    parser.push(RCPT + RCPT.replace('jo@', 'al@') + 'sender=half');
    expect(parser.next()?.get('recipient')).toBe('jo@example.net');
    expect(parser.next()?.get('recipient')).toBe('al@example.net');
    expect(parser.next()).toBeNull();
    parser.push('@acme.test\n\n');
    expect(Object.fromEntries(parser.next() ?? [])).toEqual({ sender: 'half@acme.test' });
  });
});

describe('toRelayQuery', () => {
  const parse = (text: string) => take(new PolicyRequestParser(), text)[0];

  it('maps the attributes of a RCPT request, one recipient', () => {
    expect(toRelayQuery(parse(RCPT))).toEqual({
      relayUsername: 'r-7f3k2q9d',
      clientAddress: '192.0.2.7',
      sender: 'news@acme.test',
      recipients: ['jo@example.net'],
      size: 20480,
    });
  });

  it('reads an empty sender as the null sender and leaves out empty or missing attributes', () => {
    expect(
      toRelayQuery(
        parse(
          'request=smtpd_access_policy\nprotocol_state=RCPT\nclient_address=192.0.2.7\nsender=\nsasl_username=\nsize=0\n\n',
        ),
      ),
    ).toEqual({ clientAddress: '192.0.2.7', sender: '' });
  });

  it.each([
    ['another stage', RCPT.replace('protocol_state=RCPT', 'protocol_state=DATA')],
    ['another request kind', RCPT.replace('request=smtpd_access_policy', 'request=junk')],
    ['nothing that names a company', 'request=smtpd_access_policy\nprotocol_state=RCPT\nrecipient=a@b.c\n\n'],
  ])('answers null (DUNNO) for %s', (_, text) => {
    expect(toRelayQuery(parse(text))).toBeNull();
  });
});

describe('formatReply', () => {
  it('writes the action and the empty line, with no newline inside', () => {
    expect(formatReply('OK')).toBe('action=OK\n\n');
    expect(formatReply('REJECT bad\r\nthing')).toBe('action=REJECT bad thing\n\n');
  });
});

describe('postfixAction', () => {
  it('turns DEFER_IF_PERMIT into DEFER (a 450 whatever restriction follows) and passes the rest', () => {
    expect(postfixAction('DEFER_IF_PERMIT quota exceeded')).toBe('DEFER quota exceeded');
    expect(postfixAction('REJECT account suspended')).toBe('REJECT account suspended');
    expect(postfixAction('OK')).toBe('OK');
  });
});

describe('policyAction', () => {
  it('refuses a suppressed recipient alone when the message is allowed, with the reason', () => {
    expect(
      policyAction({ action: 'OK', rejectedRecipients: [{ email: 'x@gmail.com', reason: 'hard_bounce' }] }),
    ).toBe('REJECT recipient suppressed (hard_bounce)');
    expect(policyAction({ action: 'OK', rejectedRecipients: [] })).toBe('OK');
    expect(policyAction({ action: 'OK' })).toBe('OK');
  });

  it('lets a refusal of the whole message win over the suppression', () => {
    const rejectedRecipients = [{ email: 'x@gmail.com', reason: 'complaint' as const }];
    expect(policyAction({ action: 'REJECT account suspended', rejectedRecipients })).toBe(
      'REJECT account suspended',
    );
    expect(policyAction({ action: 'DEFER_IF_PERMIT quota exceeded', rejectedRecipients })).toBe(
      'DEFER quota exceeded',
    );
  });
});
