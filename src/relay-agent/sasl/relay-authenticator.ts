import { Inject, Injectable, Logger } from '@nestjs/common';
import { RelayCredentials } from '../../modules/companies/relay-credentials';
import { smtpAuthAttempts, smtpAuthBlockedAddresses } from '../../modules/metrics/metrics';
import { AUTH_FAILURES, AuthFailures, clientKey } from './auth-failures';
import type { SaslCredentials } from './sasl-protocol';

/** Failures from one client address that block it (auth.md "Relay credentials"). */
export const MAX_FAILURES = 10;
export const FAILURE_WINDOW_MS = 10 * 60_000;

/** Longest username written to the log (it is whatever the client typed). */
const LOGGED_USERNAME = 64;

/**
 * Decides an SMTP AUTH attempt: the company's relay credentials (its relay password, or a relay
 * submission token made for its relay username), behind a count of failures per client address.
 * The address is blocked, never the username: an attacker must not be able to lock a customer
 * out. Logs the username, address and mechanism of every attempt, never the password (or token)
 * or the SASL data.
 */
@Injectable()
export class RelayAuthenticator {
  private readonly logger = new Logger('SmtpAuth');

  constructor(
    private readonly credentials: RelayCredentials,
    @Inject(AUTH_FAILURES) private readonly failures: AuthFailures,
  ) {}

  /** The canonical username on success, null on failure; throws when the database cannot answer. */
  async authenticate(attempt: Omit<SaslCredentials, 'id'>): Promise<string | null> {
    const key = attempt.clientAddress ? clientKey(attempt.clientAddress) : undefined;
    const failed = key ? await this.failures.count(key) : 0;
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
      if (key && failed > 0) await this.failures.clear(key);
      this.logger.log({ ...context, user: account.relayUsername }, 'SMTP AUTH succeeded');
      return account.relayUsername;
    }
    smtpAuthAttempts.inc({ result: 'failure' });
    if (key) await this.failures.add(key, FAILURE_WINDOW_MS);
    // This failure blocks the address (the count read above, plus this one).
    if (key && failed + 1 === MAX_FAILURES) smtpAuthBlockedAddresses.inc();
    this.logger.warn(context, 'SMTP AUTH failed');
    return null;
  }
}
