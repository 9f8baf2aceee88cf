import {
  policyAction,
  postfixAction,
  formatReply,
  MAX_REQUEST_BYTES,
  PolicyProtocolError,
  PolicyRequestParser,
  RELAY_QUERY_ATTRIBUTES,
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
    const parser = new PolicyRequestParser(['ccert_subject', 'sender']);
    const [request] = take(parser, 'ccert_subject=CN=a=b\nsender=\nnonsense\n\n');
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

  it('keeps only the attributes the relay decision reads, however many names a request has', () => {
    const names = Array.from({ length: 8000 }, (_, i) => `n${i}=\n`).join('');
    expect(names.length).toBeLessThan(MAX_REQUEST_BYTES);
    const [request] = take(new PolicyRequestParser(), `${names}${RCPT}`);
    expect([...request.keys()].sort()).toEqual([...RELAY_QUERY_ATTRIBUTES].sort());
    // A request of attributes the decision does not read is a request, not an empty one (DUNNO).
    const [unread] = take(new PolicyRequestParser(), 'protocol_name=ESMTP\ninstance=1.2\n\n');
    expect(unread.size).toBe(0);
    expect(toRelayQuery(unread)).toBeNull();
  });

  it('decodes UTF-8 split across chunks inside a character', () => {
    const bytes = Buffer.from('sender=jos\u00e9@acme.test\n\n', 'utf8');
    const at = bytes.indexOf(0xc3) + 1;
    const parser = new PolicyRequestParser();
    parser.push(bytes.subarray(0, at));
    expect(parser.next()).toBeNull();
    parser.push(bytes.subarray(at));
    expect(parser.next()?.get('sender')).toBe('jos\u00e9@acme.test');
  });

  it('counts a line that never ends against the limit as its bytes come, one byte at a time or not', () => {
    const parser = new PolicyRequestParser();
    parser.push('sender=');
    expect(() => {
      for (let i = 0; i < MAX_REQUEST_BYTES; i++) {
        parser.push('x');
        parser.next();
      }
    }).toThrow(new PolicyProtocolError('Policy request too large'));
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
