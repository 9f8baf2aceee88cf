import { Module } from '@nestjs/common';
import { SubmissionTokens } from './submission-tokens';

/**
 * Relay submission tokens (platform.md "Sending by HTTP"), for the service that makes them and
 * the relay agent's SMTP AUTH that accepts them. AppConfig comes from the global config module.
 */
@Module({
  providers: [SubmissionTokens],
  exports: [SubmissionTokens],
})
export class RelaySubmissionModule {}
