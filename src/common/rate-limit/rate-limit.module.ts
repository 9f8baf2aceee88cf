import { Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { RateLimiters } from './rate-limiters';

/**
 * The rate limits' counters (RateLimiters) of the API and of the relay agent, in Redis when
 * REDIS_URL is set. The API's guard (RateLimitGuard) is registered by AppModule.
 */
@Module({
  providers: [
    {
      provide: RateLimiters,
      inject: [AppConfig],
      useFactory: (config: AppConfig): Promise<RateLimiters> => RateLimiters.connect(config.env.REDIS_URL),
    },
  ],
  exports: [RateLimiters],
})
export class RateLimitModule implements OnApplicationShutdown {
  constructor(private readonly limiters: RateLimiters) {}

  async onApplicationShutdown(): Promise<void> {
    await this.limiters.close();
  }
}
