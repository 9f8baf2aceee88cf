import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AppConfig } from '../../config/app-config';
import { RateLimitGuard } from './rate-limit.guard';
import { RATE_LIMIT_STORE } from './rate-limit.store';
import { MemoryRateLimitStore, RateLimitStore, RedisRateLimitStore } from './rate-limit.store';

@Global()
@Module({
  providers: [
    { provide: APP_GUARD, useClass: RateLimitGuard },
    {
      provide: RATE_LIMIT_STORE,
      inject: [AppConfig],
      useFactory: async (config: AppConfig): Promise<RateLimitStore> => {
        if (!config.env.REDIS_URL) return new MemoryRateLimitStore();
        const store = new RedisRateLimitStore(config.env.REDIS_URL);
        await store.connected();
        return store;
      },
    },
  ],
  exports: [RATE_LIMIT_STORE],
})
export class RateLimitModule implements OnApplicationShutdown {
  constructor(@Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore) {}

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
