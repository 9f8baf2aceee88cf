import type { DnsRecord } from './entities/domain.entity';
import {
  checkDkim,
  checkDmarc,
  checkOwnership,
  checkReturnPath,
  checkSpf,
  Lookup,
  lostSpfOrDkim,
  passes,
  recordsToPublish,
} from './dns-records';

const txt = (...records: string[][]): Lookup<string[]> => ({ answers: records });
const KEY = 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA0123456789abcdefABCDEF+/';

describe('DNS record checks', () => {
  describe.each([
    ['ownership', (l: Lookup<string[]>) => checkOwnership(l, 'tok123'), 'TXT'],
    ['spf', (l: Lookup<string[]>) => checkSpf(l, '_spf.relay.test'), 'TXT'],
    ['dkim', (l: Lookup<string[]>) => checkDkim(l, KEY), 'DKIM TXT'],
    ['dmarc', (l: Lookup<string[]>) => checkDmarc(l), 'DMARC TXT'],
  ])('%s: what a lookup that found nothing usable gives', (_, check, what) => {
    it('a timeout is missing "DNS timeout", never an error', () => {
      expect(check({ timeout: true })).toEqual({ status: 'missing', detail: 'DNS timeout' });
    });
    it('a server failure is missing, with the error', () => {
      expect(check({ error: 'SERVFAIL' })).toEqual({ status: 'missing', detail: 'DNS error: SERVFAIL' });
    });
    it('no record (NXDOMAIN, NODATA or an empty answer) is missing', () => {
      expect(check({ none: true })).toEqual({ status: 'missing', detail: `No ${what} record found` });
      expect(check(txt())).toEqual({ status: 'missing', detail: `No ${what} record found` });
    });
  });

  describe('ownership', () => {
    it('finds the token among other TXT records', () => {
      expect(
        checkOwnership(txt(['google-site-verification=x'], [' relay-verification=tok123 ']), 'tok123'),
      ).toEqual({ status: 'ok', detail: 'Found' });
    });
    it('another token is invalid, no token at all missing', () => {
      expect(checkOwnership(txt(['relay-verification=other']), 'tok123').status).toBe('invalid');
      expect(checkOwnership(txt(['v=spf1 -all']), 'tok123')).toEqual({
        status: 'missing',
        detail: 'No relay-verification TXT record found',
      });
    });
  });

  describe('SPF', () => {
    it('joins the strings of a split TXT record before reading it', () => {
      expect(
        checkSpf(txt(['v=spf1 ip4:192.0.2.0/24 ', 'include:_spf.relay.test ~all']), '_spf.relay.test').status,
      ).toBe('ok');
    });
    it('accepts our include in any case, with a + qualifier, among other mechanisms', () => {
      expect(checkSpf(txt(['V=SPF1 mx +INCLUDE:_SPF.Relay.Test -all']), '_spf.relay.test').status).toBe('ok');
    });
    it('a v=spf1 record without our include is invalid, naming it', () => {
      expect(checkSpf(txt(['v=spf1 include:_spf.google.com ~all']), '_spf.relay.test')).toEqual({
        status: 'invalid',
        detail: 'The v=spf1 record does not include include:_spf.relay.test',
      });
      // A longer name that merely starts with ours is not ours.
      expect(checkSpf(txt(['v=spf1 include:_spf.relay.test.evil ~all']), '_spf.relay.test').status).toBe(
        'invalid',
      );
    });
    it('two v=spf1 records are invalid even when one includes ours (RFC 7208 permerror)', () => {
      expect(
        checkSpf(txt(['v=spf1 include:_spf.relay.test ~all'], ['v=spf1 mx -all']), '_spf.relay.test'),
      ).toEqual({ status: 'invalid', detail: '2 v=spf1 records found: a domain must have exactly one' });
    });
    it('TXT records that are not SPF (v=spf10, other tags) do not count', () => {
      expect(
        checkSpf(
          txt(['v=spf10 include:_spf.relay.test'], ['spf1 include:_spf.relay.test']),
          '_spf.relay.test',
        ),
      ).toEqual({ status: 'missing', detail: 'No v=spf1 record found' });
    });
  });

  describe('DKIM', () => {
    it('compares p= with our key, the key split over strings and spaces', () => {
      const half = KEY.length / 2;
      expect(checkDkim(txt(['v=DKIM1; k=rsa; p=', KEY.slice(0, half), KEY.slice(half)]), KEY).status).toBe(
        'ok',
      );
      expect(checkDkim(txt([`v=DKIM1; p=${KEY.slice(0, 10)} ${KEY.slice(10)}`]), KEY).status).toBe('ok');
    });
    it('another key, or a key of another kind, is invalid', () => {
      expect(checkDkim(txt([`v=DKIM1; k=rsa; p=${KEY}x`]), KEY)).toEqual({
        status: 'invalid',
        detail: 'The DKIM public key differs from this domain’s key',
      });
      expect(checkDkim(txt([`v=DKIM1; k=ed25519; p=${KEY}`]), KEY).status).toBe('invalid');
    });
    it('a record without p= is missing', () => {
      expect(checkDkim(txt(['v=DKIM1; k=rsa']), KEY)).toEqual({
        status: 'missing',
        detail: 'No DKIM record with a p= key found',
      });
    });
  });

  describe('DMARC and return path (advisory)', () => {
    it('exactly one v=DMARC1 record is ok, two invalid, none missing', () => {
      expect(checkDmarc(txt(['v=DMARC1; p=reject'])).status).toBe('ok');
      expect(checkDmarc(txt(['v=DMARC1; p=none'], ['v=DMARC1; p=reject'])).status).toBe('invalid');
      expect(checkDmarc(txt(['not dmarc'])).status).toBe('missing');
    });
    it('the CNAME is compared without case or the trailing dot', () => {
      expect(checkReturnPath({ answers: ['RP.Relay.Test.'] }, 'rp.relay.test').status).toBe('ok');
      expect(checkReturnPath({ answers: ['elsewhere.test'] }, 'rp.relay.test')).toEqual({
        status: 'invalid',
        detail: 'The CNAME points to elsewhere.test, not rp.relay.test',
      });
      expect(checkReturnPath({ timeout: true }, 'rp.relay.test')).toEqual({
        status: 'missing',
        detail: 'DNS timeout',
      });
    });
  });

  describe('what verifies a domain, and what fails a verified one', () => {
    const records = recordsToPublish({
      domain: 'example.com',
      verificationToken: 'tok123',
      dkimSelector: 'relay1',
      dkimPublicKey: KEY,
      spfInclude: '_spf.relay.test',
      returnPathPrefix: 'bounce',
      returnPathHost: 'rp.relay.test',
    });
    const withStatus = (ok: string[]): DnsRecord[] =>
      records.map((r) => ({ ...r, status: ok.includes(r.purpose) ? 'ok' : 'missing' }));

    it('publishes the five records of resources.md, unchecked', () => {
      expect(records.map((r) => [r.purpose, r.type, r.host, r.value, r.required, r.status])).toEqual([
        ['ownership', 'TXT', 'example.com', 'relay-verification=tok123', true, 'unchecked'],
        ['spf', 'TXT', 'example.com', 'v=spf1 include:_spf.relay.test ~all', true, 'unchecked'],
        ['dkim', 'TXT', 'relay1._domainkey.example.com', `v=DKIM1; k=rsa; p=${KEY}`, true, 'unchecked'],
        ['dmarc', 'TXT', '_dmarc.example.com', 'v=DMARC1; p=none;', false, 'unchecked'],
        ['return-path', 'CNAME', 'bounce.example.com', 'rp.relay.test', false, 'unchecked'],
      ]);
    });
    it('ownership, SPF and DKIM verify it; DMARC and the return path do not matter', () => {
      expect(passes(withStatus(['ownership', 'spf', 'dkim']))).toBe(true);
      expect(passes(withStatus(['ownership', 'spf', 'dmarc', 'return-path']))).toBe(false);
      expect(passes(withStatus(['spf', 'dkim', 'dmarc', 'return-path']))).toBe(false);
    });
    it('losing SPF or DKIM fails it; losing the ownership record or DMARC does not', () => {
      expect(lostSpfOrDkim(withStatus(['ownership', 'spf', 'dkim']))).toBe(false);
      expect(lostSpfOrDkim(withStatus(['ownership', 'dkim']))).toBe(true);
      expect(lostSpfOrDkim(withStatus(['ownership', 'spf']))).toBe(true);
      expect(lostSpfOrDkim(withStatus(['spf', 'dkim']))).toBe(false);
    });
  });
});
