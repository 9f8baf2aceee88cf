import fc from 'fast-check';
import { AppValidationPipe } from '../../../common/validation/app-validation.pipe';
import { isPlainRelayQuery, RelayDecisionQueryDto } from './relay-decision.dto';

const pipe = new AppValidationPipe();
const metadata = { type: 'body' as const, metatype: RelayDecisionQueryDto, data: '' };

/** The same DTO without the fast path (the check is kept per class, the decorators are inherited). */
class FullyValidatedQuery extends RelayDecisionQueryDto {}

/** What the full validation makes of a body: its fields, or the refusal. */
async function fullValidation(body: object): Promise<{ ok: true; value: unknown } | { ok: false }> {
  try {
    const value = await pipe.transform(body, { ...metadata, metatype: FullyValidatedQuery });
    return { ok: true, value: { ...(value as object) } };
  } catch {
    return { ok: false };
  }
}

/** Mostly what a relay sends, with the edge cases and junk mixed in. */
const hostile = fc.oneof(
  fc.constantFrom(
    '',
    ' x@example.com',
    'x@example.com ',
    ' relay-1',
    'relay-1\t',
    'a@b',
    'no-at',
    '<a@b.c>',
    'a\u0000@b.c',
    'a b@c.d',
  ),
  fc.constantFrom('256.0.0.1', '01.2.3.4', 'fe80::1%eth0', '1.2.3', '::ffff:192.0.2.1'),
  fc.string({ maxLength: 70 }),
  fc.string({ minLength: 60, maxLength: 70 }),
  fc.integer({ min: -5, max: 1e9 }),
  fc.double(),
  fc.constantFrom(null, true, {}, []),
);
const field = <T>(good: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: good, weight: 8 }, { arbitrary: hostile, weight: 1 });
const address = fc.oneof(fc.emailAddress(), fc.constantFrom('a@b', 'x@example.com'));
const body = fc.record(
  {
    relayUsername: field(fc.stringMatching(/^[a-z0-9-]{1,70}$/)),
    clientAddress: field(fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended())),
    sender: field(fc.oneof(address, fc.constant(''))),
    recipients: field(fc.array(field(address), { maxLength: 4 })),
    size: field(fc.integer({ min: 0, max: 1e9 })),
    other: hostile,
  },
  { requiredKeys: [] },
);

describe('RelayDecisionQueryDto fast path', () => {
  it('accepts the ordinary query a relay sends, without class-validator', () => {
    expect(
      isPlainRelayQuery({
        relayUsername: 'relay-1',
        clientAddress: '203.0.113.7',
        sender: 'news@company.example',
        recipients: ['a@example.net', 'b@example.org'],
        size: 20480,
      }),
    ).toBe(true);
    expect(isPlainRelayQuery({ sender: '' })).toBe(true);
  });

  it('never accepts what the full validation refuses or would change', async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const input = Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined));
        if (!isPlainRelayQuery(input)) return;
        accepted++;
        const full = await fullValidation(input);
        expect(full).toEqual({ ok: true, value: input });
      }),
      { numRuns: 3000 },
    );
    // The property says something only if the generated bodies often take the fast path.
    expect(accepted).toBeGreaterThan(100);
  });

  it('agrees with the full validation on every edge case of every field', async () => {
    const base = {
      relayUsername: 'relay-1',
      clientAddress: '203.0.113.7',
      sender: 'news@company.example',
      recipients: ['a@example.net'],
      size: 20480,
    };
    const edges: unknown[] = [
      ...['', ' relay-1', 'relay-1 ', 'relay-1\t', '\u00a0x', 'a\u0000b', 'x'.repeat(64), 'x'.repeat(65)],
      ...[
        'x@example.com',
        ' x@example.com',
        'a@b',
        'no-at',
        '<a@b.c>',
        'a b@c.d',
        `${'x'.repeat(310)}@example.com`,
      ],
      ...['192.0.2.1', '::1', '::ffff:192.0.2.1', '256.0.0.1', '01.2.3.4', 'fe80::1%eth0', '1.2.3', '0.0.0'],
      ...[0, -1, 1.5, 2 ** 53, NaN, Infinity, '12', null, true, {}, []],
      ...[['a@b.c'], ['a@b.c', ' b@c.d'], [null], [1], Array(1001).fill('a@b.c'), Array(1000).fill('a@b.c')],
    ];
    for (const key of [...Object.keys(base), 'other']) {
      for (const edge of edges) {
        const input = { ...base, [key]: edge };
        const full = await fullValidation(input);
        if (isPlainRelayQuery(input))
          expect({ key, edge, full }).toEqual({ key, edge, full: { ok: true, value: input } });
        else if (full.ok) expect({ key, edge, full: full.value }).not.toEqual({ key, edge, full: input });
      }
    }
  });

  it('is what the pipe uses: a fast-path body comes back as it was sent', async () => {
    const input = { relayUsername: 'relay-1', recipients: ['a@example.net'], size: 1 };
    await expect(pipe.transform(input, metadata)).resolves.toBe(input);
  });
});
