import { Logger } from '@nestjs/common';
import type { RelayCredentials } from '../../modules/companies/relay-credentials';
import { RateLimiters } from '../../common/rate-limit/rate-limiters';
import { clientKey, RelayAuthenticator } from './relay-authenticator';

const PASSWORD = 'the-right-relay-password';

describe('clientKey', () => {
  it.each([
    ['192.0.2.7', '192.0.2.7'],
    ['::ffff:192.0.2.7', '192.0.2.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:DB8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:0db8:0000:0002:ffff::', '2001:db8:0:2::/64'],
    ['::1', '0:0:0:0::/64'],
    ['64:ff9b::192.0.2.7', '64:ff9b:0:0::/64'],
    ['::192.0.2.7', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::FFFF:192.0.2.7', '192.0.2.7'],
    ['0:0:0:0:0:ffff:192.0.2.7', '192.0.2.7'],
    ['IPv6:2001:db8::1', 'IPv6:2001:db8::1'],
    ['unknown', 'unknown'],
    ['', ''],
  ])('%s counts as %s', (address, key) => {
    expect(clientKey(address)).toBe(key);
  });
});

describe('RelayAuthenticator', () => {
  let limiters: RateLimiters;
  let check: jest.Mock;
  let authenticator: RelayAuthenticator;
  let logged: unknown[][];

  beforeEach(async () => {
    limiters = await RateLimiters.connect(undefined);
    check = jest.fn((username: string, password: string) =>
      Promise.resolve(
        username.toLowerCase() === 'r-abc' && password === PASSWORD
          ? { id: 1, uuid: 'u', relayUsername: 'r-abc' }
          : null,
      ),
    );
    authenticator = new RelayAuthenticator({ check } as unknown as RelayCredentials, limiters);
    logged = [];
    for (const level of ['log', 'warn', 'error'] as const) {
      jest.spyOn(Logger.prototype, level).mockImplementation((...args: unknown[]) => void logged.push(args));
    }
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await limiters.close();
  });

  const attempt = (password: string, clientAddress = '192.0.2.7', username = 'R-ABC') =>
    authenticator.authenticate({ mechanism: 'PLAIN', username, password, clientAddress });

  it('answers the canonical username and logs user, address and mechanism, never the password', async () => {
    expect(await attempt(PASSWORD)).toBe('r-abc');
    expect(await attempt('wrong')).toBeNull();
    expect(logged).toEqual([
      [{ user: 'r-abc', rip: '192.0.2.7', mech: 'PLAIN' }, 'SMTP AUTH succeeded'],
      [{ user: 'R-ABC', rip: '192.0.2.7', mech: 'PLAIN' }, 'SMTP AUTH failed'],
    ]);
    expect(JSON.stringify(logged)).not.toContain(PASSWORD);
    expect(JSON.stringify(logged)).not.toContain('wrong');
  });

  it('blocks an address after 10 failures, without checking, and only that address', async () => {
    for (let i = 0; i < 10; i++) expect(await attempt('wrong')).toBeNull();
    expect(check).toHaveBeenCalledTimes(10);
    expect(await attempt(PASSWORD)).toBeNull();
    expect(check).toHaveBeenCalledTimes(10);
    expect(logged.at(-1)).toEqual([
      { user: 'R-ABC', rip: '192.0.2.7', mech: 'PLAIN' },
      'SMTP AUTH refused: too many failures from this address',
    ]);
    // Not the username: from elsewhere the same account still logs in.
    expect(await attempt(PASSWORD, '198.51.100.1')).toBe('r-abc');
  });

  it('counts IPv6 by /64 and IPv4-mapped addresses as IPv4', async () => {
    for (let i = 0; i < 10; i++) await attempt('wrong', `2001:db8:1:2::${i + 1}`);
    expect(await attempt(PASSWORD, '2001:db8:1:2:ffff::1')).toBeNull();
    expect(await attempt(PASSWORD, '2001:db8:1:3::1')).toBe('r-abc');
    for (let i = 0; i < 10; i++) await attempt('wrong', '::ffff:203.0.113.5');
    expect(await attempt(PASSWORD, '203.0.113.5')).toBeNull();
  });

  it('clears the count on a success', async () => {
    for (let i = 0; i < 9; i++) await attempt('wrong');
    expect(await attempt(PASSWORD)).toBe('r-abc');
    for (let i = 0; i < 9; i++) await attempt('wrong');
    expect(await attempt(PASSWORD)).toBe('r-abc');
  });

  it('lets the address in again once the window has passed', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] });
    try {
      for (let i = 0; i < 10; i++) await attempt('wrong');
      jest.advanceTimersByTime(10 * 60_000 - 1);
      expect(await attempt(PASSWORD)).toBeNull();
      jest.advanceTimersByTime(1);
      expect(await attempt(PASSWORD)).toBe('r-abc');
    } finally {
      jest.useRealTimers();
    }
  });

  it('lets a database error through (the connection is then closed) and counts nothing', async () => {
    check.mockRejectedValueOnce(new Error('database down'));
    await expect(attempt(PASSWORD)).rejects.toThrow('database down');
    // Nine failures more do not block the address: the error was not counted as a tenth.
    for (let i = 0; i < 9; i++) expect(await attempt('wrong')).toBeNull();
    expect(await attempt(PASSWORD)).toBe('r-abc');
  });

  it('opens the window at the first failure: failures later in it do not extend it', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] });
    try {
      await attempt('wrong');
      jest.advanceTimersByTime(5 * 60_000);
      for (let i = 0; i < 9; i++) await attempt('wrong');
      expect(await attempt(PASSWORD)).toBeNull();
      jest.advanceTimersByTime(5 * 60_000);
      expect(await attempt(PASSWORD)).toBe('r-abc');
    } finally {
      jest.useRealTimers();
    }
  });

  it('counts nothing for an attempt without a client address', async () => {
    const without = (password: string) =>
      authenticator.authenticate({
        mechanism: 'PLAIN',
        username: 'r-abc',
        password,
        clientAddress: undefined,
      });
    for (let i = 0; i < 12; i++) expect(await without('wrong')).toBeNull();
    expect(await without(PASSWORD)).toBe('r-abc');
  });
});
