import { Global, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { Logger } from 'pino';
import { AppConfig } from '../../config/app-config';
import { createRootLogger, loggerOptions, ROOT_LOGGER } from './logger.options';

/** The root pino logger (for configureApp's request hooks) and nestjs-pino on top of it. */
@Global()
@Module({
  providers: [{ provide: ROOT_LOGGER, inject: [AppConfig], useFactory: createRootLogger }],
  exports: [ROOT_LOGGER],
  imports: [
    LoggerModule.forRootAsync({ inject: [ROOT_LOGGER], useFactory: (root: Logger) => loggerOptions(root) }),
  ],
})
export class LoggingModule {}
