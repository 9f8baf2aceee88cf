import fc from 'fast-check';
import { domainToASCII } from 'node:url';
import { domainOf, normaliseDomainName } from './domain-name';

describe('domainOf', () => {
  it.each([
    ['news@Example.COM', 'example.com'],
    ['a@b@mail.example.org.', 'mail.example.org'],
    ['info@bücher.de', 'xn--bcher-kva.de'],
    ['x@xn--bcher-kva.de', 'xn--bcher-kva.de'],
    ['x@127.1', '127.0.0.1'],
    ['x@0x7f.1', '127.0.0.1'],
    ['x@xn--zz.com', null],
    ['x@exa mple.com', null],
    ['no-at-sign', null],
    ['trailing@', null],
    ['', null],
    [undefined, null],
  ])('%j → %j', (address, domain) => {
    expect(domainOf(address)).toBe(domain);
  });

  it('gives what domainToASCII gives for any ASCII domain (the fast path changes nothing)', () => {
    const chars = fc.constantFrom(...'abcxnz0129.-_'.split(''), 'X', 'x', 'n', '-');
    fc.assert(
      fc.property(fc.array(chars, { minLength: 1, maxLength: 24 }), (parts) => {
        const domain = parts.join('');
        const slow = domainToASCII(domain.replace(/\.$/, '').toLowerCase()) || null;
        expect(domainOf(`user@${domain}`)).toBe(slow);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('normaliseDomainName', () => {
  it('stores an IDN as punycode and refuses an address', () => {
    expect(normaliseDomainName(' Bücher.DE. ')).toEqual({ name: 'xn--bcher-kva.de' });
    expect(normaliseDomainName('192.0.2.1')).toHaveProperty('problem');
  });
});
