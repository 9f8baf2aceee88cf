import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { CompanyRelayModule } from '../../modules/companies/company-relay.module';
import { AUTH_FAILURES, AuthFailures, MemoryAuthFailures, RedisAuthFailures } from './auth-failures';
import { RelayAuthenticator } from './relay-authenticator';

/** SMTP AUTH's decision: the companies' relay credentials and the failure counters (Redis when REDIS_URL is set). */
@Module({
  imports: [CompanyRelayModule],
  providers: [
    RelayAuthenticator,
    {
      provide: AUTH_FAILURES,
      inject: [AppConfig],
      useFactory: async (config: AppConfig): Promise<AuthFailures> => {
        if (!config.env.REDIS_URL) return new MemoryAuthFailures();
        const failures = new RedisAuthFailures(config.env.REDIS_URL);
        await failures.connected();
        return failures;
      },
    },
  ],
  exports: [RelayAuthenticator],
})
export class SaslModule implements OnApplicationShutdown {
  constructor(@Inject(AUTH_FAILURES) private readonly failures: AuthFailures) {}

  async onApplicationShutdown(): Promise<void> {
    await this.failures.close();
  }
}
