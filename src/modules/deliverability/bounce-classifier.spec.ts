import fixtureFile from '../../../test/fixtures/bounce-replies.json';
import { Bounce, BOUNCE_CATEGORIES, BounceCategory, BounceType, classifyBounce } from './bounce-classifier';
import { BOUNCE_RULES, RuleExample } from './bounce-rules';

interface FixtureReply {
  source: string;
  reply: string;
  dsn: string | null;
  relay: string | null;
  expected: Bounce;
  note: string;
}

const fixtures = fixtureFile as FixtureReply[];

/** deliverability.md's table: the one type each category has (`other` goes by the reply's class). */
const CONTRACT_TYPES: Record<Exclude<BounceCategory, 'other'>, BounceType> = {
  'unknown-recipient': 'hard',
  'bad-domain': 'hard',
  'mailbox-disabled': 'hard',
  'mailbox-full': 'soft',
  'message-too-large': 'block',
  authentication: 'block',
  reputation: 'block',
  content: 'block',
  'rate-limited': 'soft',
  infrastructure: 'soft',
  policy: 'block',
};

const short = (text: string) => (text.length > 110 ? `${text.slice(0, 107)}...` : text);

const exampleInput = (example: RuleExample) =>
  typeof example === 'string'
    ? { dsn: null, response: example, relay: null }
    : { dsn: example.dsn ?? null, response: example.reply, relay: example.relay ?? null };

const exampleText = (example: RuleExample) => (typeof example === 'string' ? example : example.reply);

describe('classifyBounce: real replies (test/fixtures/bounce-replies.json)', () => {
  it.each(fixtures.map((entry) => [`${entry.source}: ${short(entry.reply)}`, entry] as const))(
    '%s',
    (_name, entry) => {
      expect(classifyBounce({ dsn: entry.dsn, response: entry.reply, relay: entry.relay })).toEqual(
        entry.expected,
      );
    },
  );

  it('holds the replies the contract asks for, from every kind of source', () => {
    const count = (predicate: (entry: FixtureReply) => boolean) => fixtures.filter(predicate).length;
    const from = (...sources: string[]) => count((entry) => sources.includes(entry.source));
    expect(fixtures.length).toBeGreaterThanOrEqual(130);
    expect(from('gmail')).toBeGreaterThanOrEqual(15);
    expect(from('microsoft')).toBeGreaterThanOrEqual(15);
    expect(from('yahoo', 'aol')).toBeGreaterThanOrEqual(10);
    expect(from('apple')).toBeGreaterThanOrEqual(6);
    expect(
      from('proofpoint', 'mimecast', 'barracuda', 'cisco', 'symantec', 'trendmicro'),
    ).toBeGreaterThanOrEqual(12);
    expect(count((entry) => /listed|^dnsbl-/.test(entry.expected.rule))).toBeGreaterThanOrEqual(8);
    expect(
      count((entry) => entry.source === 'postfix' && entry.expected.rule.startsWith('postfix-')),
    ).toBeGreaterThanOrEqual(15);
    expect(count((entry) => /\b[245]\d\d-/.test(entry.reply))).toBeGreaterThanOrEqual(10);
    expect(from('provider-event')).toBeGreaterThanOrEqual(3);
    expect(
      count((entry) => entry.expected.category === 'other' && entry.expected.rule.startsWith('other-')),
    ).toBeGreaterThanOrEqual(5);
  });

  it('expects only categories, types and rules that exist', () => {
    const names = new Set([...BOUNCE_RULES.map((rule) => rule.name), 'other-hard', 'other-soft']);
    for (const { expected } of fixtures) {
      expect(BOUNCE_CATEGORIES).toContain(expected.category);
      expect(names).toContain(expected.rule);
    }
  });
});

describe('BOUNCE_RULES', () => {
  it('names each rule once', () => {
    const names = BOUNCE_RULES.map((rule) => rule.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it("gives each rule its category's type, and `other` only to temporary (4xx) replies", () => {
    for (const rule of BOUNCE_RULES) {
      if (rule.category === 'other') expect([rule.replyClass, rule.type]).toEqual([4, 'soft']);
      else expect([rule.name, rule.type]).toEqual([rule.name, CONTRACT_TYPES[rule.category]]);
    }
  });

  it('uses regexps that keep no state between calls', () => {
    for (const rule of BOUNCE_RULES)
      for (const pattern of [rule.text, rule.relay]) expect(pattern?.flags ?? '').not.toMatch(/[gy]/);
  });

  it('shows every rule with at least one reply it was written for', () => {
    for (const rule of BOUNCE_RULES) expect([rule.name, rule.examples.length > 0]).toEqual([rule.name, true]);
  });

  for (const rule of BOUNCE_RULES) {
    describe(`${rule.name} (${rule.category}, ${rule.type})`, () => {
      it.each(rule.examples.map((example) => [short(exampleText(example)), example] as const))(
        '%s',
        (_name, example) => {
          expect(classifyBounce(exampleInput(example))).toEqual({
            type: rule.type,
            category: rule.category,
            rule: rule.name,
          });
        },
      );
    });
  }
});

describe('classifyBounce: precedence', () => {
  const classify = (response: string, dsn: string | null = null, relay: string | null = null) =>
    classifyBounce({ dsn, response, relay });

  it("puts a provider's words before the bare code: Gmail's 5.7.1 unsolicited is reputation, a bare 5.7.1 is policy", () => {
    expect(classify('550 5.7.1 This message is likely unsolicited email. - gsmtp').rule).toBe(
      'gmail-unsolicited',
    );
    expect(classify('550 5.7.1 Go away').category).toBe('policy');
  });

  it('never makes a 4xx reply hard or block, whatever its words', () => {
    expect(classify('450 4.1.1 <jo@example.net>: Recipient address rejected: User unknown')).toEqual({
      type: 'soft',
      category: 'other',
      rule: 'other-soft',
    });
    expect(classify('421 4.7.0 Client host [192.0.2.7] blocked using zen.spamhaus.org').rule).toBe(
      'temporary-policy',
    );
    expect(
      classify(
        'Host or domain name not found. Name service error for name=a.example type=MX: Host not found',
        '4.4.4',
      ),
    ).toEqual({ type: 'soft', category: 'infrastructure', rule: 'postfix-dns-temporary' });
  });

  it('takes the dsn before the code in the text', () => {
    expect(
      classify('host mx[192.0.2.7] said: 550 5.1.1 no such user here (in reply to RCPT TO command)', '4.1.1')
        .type,
    ).toBe('soft');
  });

  it('looks at the next hop only where a rule asks for it', () => {
    const unavailable = '550 5.5.0 Requested action not taken: mailbox unavailable (S2017062302).';
    expect(
      classify(unavailable, '5.5.0', 'outlook-com.olc.protection.outlook.com[52.101.42.3]:25').rule,
    ).toBe('microsoft-mailbox-unavailable');
    expect(classify(unavailable, '5.5.0', 'mx.example.net[192.0.2.7]:25').rule).toBe('other-hard');
  });

  it('reads a phrase split by the line codes of a multi-line reply', () => {
    expect(
      classify('550-5.7.1 this message is 550-5.7.1 likely 550-5.7.1 unsolicited 550 5.7.1 mail. - gsmtp')
        .rule,
    ).toBe('gmail-unsolicited');
  });
});

describe('classifyBounce: replies no rule knows', () => {
  it.each([
    ['a 4xx reply', '451 4.3.9 Something new', null, { type: 'soft', category: 'other', rule: 'other-soft' }],
    ['a 5xx reply', '554 5.9.9 Something new', null, { type: 'hard', category: 'other', rule: 'other-hard' }],
    [
      'a 5xx reply without an enhanced code',
      '554 Something new',
      null,
      { type: 'hard', category: 'other', rule: 'other-hard' },
    ],
    [
      'a bare 4.x.x code',
      '4.9.9 Something new',
      null,
      { type: 'soft', category: 'other', rule: 'other-soft' },
    ],
    [
      'a bare 5.x.x code',
      '5.9.9 Something new',
      null,
      { type: 'hard', category: 'other', rule: 'other-hard' },
    ],
    [
      'a 5.x.x dsn with free text',
      'Something new',
      '5.0.0',
      { type: 'hard', category: 'other', rule: 'other-hard' },
    ],
    [
      'a 4.x.x dsn over a 5xx text',
      '554 Something new',
      '4.0.0',
      { type: 'soft', category: 'other', rule: 'other-soft' },
    ],
    [
      'text without any code',
      'Something new happened',
      null,
      { type: 'soft', category: 'other', rule: 'other-soft' },
    ],
  ])('falls to `other` by its class: %s', (_name, response, dsn, expected) => {
    expect(classifyBounce({ dsn, response, relay: null })).toEqual(expected);
  });
});

describe('classifyBounce: empty input', () => {
  it.each([
    [{ dsn: null, response: null, relay: null }],
    [{ dsn: '', response: '', relay: '' }],
    [{ dsn: 'junk', response: '   ', relay: 'none' }],
    [{ dsn: null, response: null, relay: '[' }],
  ])('returns other-soft without throwing for %j', (input) => {
    expect(classifyBounce(input)).toEqual({ type: 'soft', category: 'other', rule: 'other-soft' });
  });

  it('takes a 5.x.x dsn alone as a hard failure', () => {
    expect(classifyBounce({ dsn: '5.0.0', response: null, relay: null })).toEqual({
      type: 'hard',
      category: 'other',
      rule: 'other-hard',
    });
  });

  it('does not throw on what a corrupt record could hold', () => {
    const corrupt = { dsn: 42, response: { text: 'x' }, relay: 7 } as unknown as Parameters<
      typeof classifyBounce
    >[0];
    expect(() => classifyBounce(corrupt)).not.toThrow();
    expect(() => classifyBounce(null as unknown as Parameters<typeof classifyBounce>[0])).not.toThrow();
    expect(() => classifyBounce({ dsn: null, response: '550-'.repeat(5000), relay: null })).not.toThrow();
  });
});
