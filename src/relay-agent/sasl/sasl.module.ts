import { Module } from '@nestjs/common';
import { RateLimitModule } from '../../common/rate-limit/rate-limit.module';
import { CompanyRelayModule } from '../../modules/companies/company-relay.module';
import { RelayAuthenticator } from './relay-authenticator';

/** SMTP AUTH's decision: the companies' relay credentials and the failure counters (Redis when REDIS_URL is set). */
@Module({
  imports: [CompanyRelayModule, RateLimitModule],
  providers: [RelayAuthenticator],
  exports: [RelayAuthenticator],
})
export class SaslModule {}
