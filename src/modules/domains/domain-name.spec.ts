import { normaliseDomainName } from './domain-name';

describe('normaliseDomainName', () => {
  it('stores an IDN as punycode and refuses an address', () => {
    expect(normaliseDomainName(' Bücher.DE. ')).toEqual({ name: 'xn--bcher-kva.de' });
    expect(normaliseDomainName('192.0.2.1')).toHaveProperty('problem');
  });

  it('keeps A-labels that decode, refuses broken ones the same on every Node.js line', () => {
    expect(normaliseDomainName('xn--bcher-kva.de')).toEqual({ name: 'xn--bcher-kva.de' });
    expect(normaliseDomainName('mail.xn--ls8h.la')).toEqual({ name: 'mail.xn--ls8h.la' });
    for (const broken of ['xn--zz.com', 'a.xn--a.com']) {
      expect(normaliseDomainName(broken)).toEqual({ problem: 'name is not a valid domain name' });
    }
  });
});
