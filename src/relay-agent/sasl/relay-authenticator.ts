import { Injectable, Logger } from '@nestjs/common';
import { isIP } from 'node:net';
import type { RateLimiterRes } from 'rate-limiter-flexible';
import { ipv6Hex, maskIpv6Hex, normaliseIp } from '../../common/net/ip-address';
import { Limiter, RateLimiters } from '../../common/rate-limit/rate-limiters';
import { RelayCredentials } from '../../modules/companies/relay-credentials';
import { smtpAuthAttempts, smtpAuthBlockedAddresses } from '../../modules/metrics/metrics';
import type { SaslCredentials } from './sasl-protocol';

/** Failures from one client address that block it (auth.md "Relay credentials"). */
export const MAX_FAILURES = 10;
export const FAILURE_WINDOW_MS = 10 * 60_000;

/** Longest username written to the log (it is whatever the client typed). */
const LOGGED_USERNAME = 64;

/**
 * The key an address's failures are counted under: an IPv4 address as it is (IPv4-mapped IPv6
 * written as IPv4), an IPv6 address by its /64 (one customer network) as its four groups in
 * lower-case hex (`2001:db8:0:2::/64`), anything else as given.
 */
export function clientKey(address: string): string {
  const ip = isIP(address) ? normaliseIp(address) : null;
  if (ip === null) return address;
  if (!ip.includes(':')) return ip;
  const groups = maskIpv6Hex(ipv6Hex(ip), 64).match(/.{4}/g) ?? [];
  return `${groups.map((group) => parseInt(group, 16).toString(16)).join(':')}::/64`;
}

/**
 * Decides an SMTP AUTH attempt: the company's relay credentials (its relay password, or a relay
 * submission token made for its relay username), behind a count of failures per client address.
 * The address is blocked, never the username: an attacker must not be able to lock a customer
 * out. Logs the username, address and mechanism of every attempt, never the password (or token)
 * or the SASL data.
 *
 * The failures of an address are counted in a fixed window that opens at its first failure
 * (`sasl-fail:<clientKey>` in Redis, shared by the agents, when REDIS_URL is set); they are read
 * before the check and cleared by a success.
 */
@Injectable()
export class RelayAuthenticator {
  private readonly logger = new Logger('SmtpAuth');
  private readonly failures: Limiter;

  constructor(
    private readonly credentials: RelayCredentials,
    limiters: RateLimiters,
  ) {
    this.failures = limiters.create({
      keyPrefix: 'sasl-fail',
      points: MAX_FAILURES,
      duration: FAILURE_WINDOW_MS / 1000,
    });
  }

  /** The canonical username on success, null on failure; throws when the database cannot answer. */
  async authenticate(attempt: Omit<SaslCredentials, 'id'>): Promise<string | null> {
    const key = attempt.clientAddress ? clientKey(attempt.clientAddress) : undefined;
    const failed = key ? await this.failuresOf(key) : 0;
    const context = {
      user: attempt.username.slice(0, LOGGED_USERNAME),
      rip: attempt.clientAddress,
      mech: attempt.mechanism,
    };
    if (failed >= MAX_FAILURES) {
      smtpAuthAttempts.inc({ result: 'blocked' });
      this.logger.warn(context, 'SMTP AUTH refused: too many failures from this address');
      return null;
    }
    const account = await this.credentials.check(attempt.username, attempt.password);
    if (account) {
      smtpAuthAttempts.inc({ result: 'success' });
      if (key && failed > 0) await this.clearFailures(key);
      this.logger.log({ ...context, user: account.relayUsername }, 'SMTP AUTH succeeded');
      return account.relayUsername;
    }
    smtpAuthAttempts.inc({ result: 'failure' });
    if (key) await this.failures.limiter.penalty(key);
    // This failure blocks the address (the count read above, plus this one).
    if (key && failed + 1 === MAX_FAILURES) smtpAuthBlockedAddresses.inc();
    this.logger.warn(context, 'SMTP AUTH failed');
    return null;
  }

  /**
   * Failures in the address's open window: the larger of the shared count and this process's, so
   * an address blocked in the process while Redis was unreachable stays blocked once it is back.
   */
  private async failuresOf(key: string): Promise<number> {
    const { limiter, inProcess } = this.failures;
    const counts = await Promise.all([limiter.get(key), inProcess.get(key)]);
    return Math.max(...counts.map(inWindow));
  }

  private async clearFailures(key: string): Promise<void> {
    const { limiter, inProcess } = this.failures;
    await Promise.all([limiter.delete(key), inProcess.delete(key)]);
  }
}

/** The points of a window still open (the in-process store drops a window on a timer, which may run late). */
function inWindow(res: RateLimiterRes | null): number {
  return res && res.msBeforeNext > 0 ? res.consumedPoints : 0;
}
