import { isLoopback, MetricsAccessRule } from './metrics-access';

const TOKEN = 'a-metrics-token-of-at-least-32-characters';
const from = (remoteAddress: string | undefined, headers: Record<string, string> = {}) => ({
  headers,
  socket: { remoteAddress },
});

describe('the /metrics access rule', () => {
  it('takes loopback in every form Node reports it, and nothing else', () => {
    expect(
      ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1', '::FFFF:127.0.0.1'].map(isLoopback),
    ).toEqual([true, true, true, true, true]);
    expect(
      ['10.0.0.1', '::ffff:10.0.0.1', '0.0.0.0', '::', '1127.0.0.1', '::2', 'localhost', '', undefined].map(
        isLoopback,
      ),
    ).toEqual([false, false, false, false, false, false, false, false, false]);
  });

  it('with a token: the bearer token from anywhere, 401 for anything else, loopback included', () => {
    const rule = new MetricsAccessRule(TOKEN);
    expect(rule.check(from('203.0.113.9', { authorization: `Bearer ${TOKEN}` }))).toBe('allowed');
    expect(rule.check(from('203.0.113.9', { authorization: `bearer   ${TOKEN} ` }))).toBe('allowed');
    expect(rule.check(from('127.0.0.1'))).toBe('unauthorized');
    expect(rule.check(from('127.0.0.1', { authorization: `Bearer ${TOKEN}x` }))).toBe('unauthorized');
    expect(rule.check(from('127.0.0.1', { authorization: `Basic ${TOKEN}` }))).toBe('unauthorized');
    expect(rule.check(from('127.0.0.1', { authorization: 'Bearer ' }))).toBe('unauthorized');
  });

  it('without a token: loopback peers that no proxy forwarded, 403 for the rest', () => {
    const rule = new MetricsAccessRule(undefined);
    expect(rule.check(from('127.0.0.1'))).toBe('allowed');
    expect(rule.check(from('::1'))).toBe('allowed');
    expect(rule.check(from('192.0.2.1'))).toBe('forbidden');
    expect(rule.check(from(undefined))).toBe('forbidden');
    expect(rule.check(from('127.0.0.1', { 'x-forwarded-for': '127.0.0.1' }))).toBe('forbidden');
    expect(rule.check(from('127.0.0.1', { forwarded: 'for=127.0.0.1' }))).toBe('forbidden');
    // A token sent anyway changes nothing while none is configured.
    expect(rule.check(from('192.0.2.1', { authorization: `Bearer ${TOKEN}` }))).toBe('forbidden');
  });
});
