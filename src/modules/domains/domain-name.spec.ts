import { normaliseDomainName } from './domain-name';

describe('normaliseDomainName', () => {
  it('stores an IDN as punycode and refuses an address', () => {
    expect(normaliseDomainName(' Bücher.DE. ')).toEqual({ name: 'xn--bcher-kva.de' });
    expect(normaliseDomainName('192.0.2.1')).toHaveProperty('problem');
  });
});
