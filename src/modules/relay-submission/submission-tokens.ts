import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { makeSubmissionToken, verifySubmissionToken } from './submission-token';

/**
 * Submission tokens with this process's RELAY_SUBMIT_SECRET: the service makes them to submit
 * messages sent by HTTP, the relay agent's SMTP AUTH verifies them.
 */
@Injectable()
export class SubmissionTokens {
  constructor(private readonly config: AppConfig) {}

  /** A token for `relayUsername`, valid 10 minutes. Throws when RELAY_SUBMIT_SECRET is not set. */
  make(relayUsername: string): string {
    const key = this.config.relaySubmitKey;
    if (!key) throw new Error('RELAY_SUBMIT_SECRET is not set: no relay submission token can be made');
    return makeSubmissionToken(key, relayUsername);
  }

  /** Whether `token` is a valid token for `relayUsername`; always false when RELAY_SUBMIT_SECRET is not set. */
  verify(relayUsername: string, token: string): boolean {
    const key = this.config.relaySubmitKey;
    return key !== undefined && verifySubmissionToken(key, relayUsername, token);
  }
}
