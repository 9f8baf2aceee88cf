import { Global, Module } from '@nestjs/common';
import { EncryptionService } from '../common/crypto/encryption.service';
import { AppConfig } from './app-config';

/**
 * Configuration is read from process.env when the application is created (not when this
 * file is imported), so each test application can be built with its own environment. In
 * development, secrets the environment does not set are kept in DATA_DIR and reused.
 */
@Global()
@Module({
  providers: [
    {
      provide: AppConfig,
      useFactory: () => AppConfig.fromEnv(process.env, undefined, { keepGeneratedSecrets: true }),
    },
    EncryptionService,
  ],
  exports: [AppConfig, EncryptionService],
})
export class AppConfigModule {}
