import fc from 'fast-check';
import { normaliseDomainName } from '../domains/domain-name';
import { normaliseRelayUsername, senderDomainOf } from './sender-identity';

describe('senderDomainOf', () => {
  it.each([
    ['', { kind: 'null' }],
    ['<>', { kind: 'null' }],
    [undefined, { kind: 'null' }],
    ['news@Example.COM', { kind: 'domain', name: 'example.com' }],
    ['a@b@mail.example.org.', { kind: 'domain', name: 'mail.example.org' }],
    ['"a@b"@acme.test', { kind: 'domain', name: 'acme.test' }],
    ['info@bücher.de', { kind: 'domain', name: 'xn--bcher-kva.de' }],
    ['info@BÜCHER.de.', { kind: 'domain', name: 'xn--bcher-kva.de' }],
    ['x@xn--bcher-kva.de', { kind: 'domain', name: 'xn--bcher-kva.de' }],
    ['"a>, client=h[1.2.3.4], sasl_username=r-victim, b="@own.test', { kind: 'domain', name: 'own.test' }],
    ['ceo', { kind: 'none' }],
    ['ceo@', { kind: 'none' }],
    ['ceo@.', { kind: 'none' }],
    ['ceo@a.a..', { kind: 'none' }],
    ['ceo@[192.0.2.1]', { kind: 'none' }],
    ['ceo@[IPv6:2001:db8::1]', { kind: 'none' }],
    ['ceo@x%y', { kind: 'none' }],
    ['x@127.1', { kind: 'none' }],
    ['x@192.0.2.1', { kind: 'none' }],
    ['x@localhost', { kind: 'none' }],
    ['x@xn--zz.com', { kind: 'none' }],
    ['x@exa mple.com', { kind: 'none' }],
    ['x@-acme.test', { kind: 'none' }],
  ])('%j → %j', (sender, expected) => {
    expect(senderDomainOf(sender)).toEqual(expected);
  });

  it('gives what the stored-domain normaliser gives for any domain (the fast path changes nothing)', () => {
    const chars = fc.constantFrom(...'abcxnz0129.-_'.split(''), 'X', 'ü', 'n', '-', '[', '%');
    fc.assert(
      fc.property(fc.array(chars, { minLength: 1, maxLength: 24 }), (parts) => {
        const domain = parts.join('');
        const slow = normaliseDomainName(domain.toLowerCase());
        const expected = 'name' in slow && !domain.startsWith('[') ? slow.name : null;
        const found = senderDomainOf(`user@${domain}`);
        expect(found.kind === 'domain' ? found.name : null).toBe(expected);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('normaliseRelayUsername', () => {
  it('compares relay usernames case-insensitively', () => {
    expect(normaliseRelayUsername('R-ESK9FATN')).toBe('r-esk9fatn');
    expect(normaliseRelayUsername(' r-esk9fatn ')).toBe('r-esk9fatn');
  });
});
