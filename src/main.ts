import 'dotenv/config';
// Before anything queues work on the libuv pool: it sizes the pool (argon2's memory, see there).
import './common/runtime/thread-pool';
// Before argon2's first hash: glibc then returns its 19 MiB blocks (see there).
import './common/runtime/malloc-threshold';
// Before the application allocates: bounds the garbage V8 lets the heap hold (see there).
import './common/runtime/heap-growth';
import { NestFactory } from '@nestjs/core';
import { AddressInfo, isIPv6 } from 'node:net';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { reportEventLoopDelayOverIpc } from './common/runtime/event-loop-report';
import { AppConfig, ConfigurationError } from './config/app-config';
import { configureApp, createFastifyAdapter, NEST_APP_OPTIONS } from './configure-app';

/** How long SIGTERM waits for requests in flight before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 10_000;

async function bootstrap(): Promise<void> {
  // Validate before Nest starts, so a configuration error is a plain list rather than a stack trace
  // (a broken development secrets file too: this call creates or reads it, AppConfigModule's reuses it).
  const checked = AppConfig.fromEnv(process.env, { warn: () => undefined }, { keepGeneratedSecrets: true });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule,
    createFastifyAdapter(),
    NEST_APP_OPTIONS,
  );
  await configureApp(app);
  const config = app.get(AppConfig);
  await app.listen(config.env.PORT, config.host);
  const logger = app.get(Logger);
  // The start's last line: where it listens, where the docs are, and (repeated, since the first
  // one is far above) what the secrets not set in the environment are and where they are kept.
  const ready = readyLine(config.host, (app.getHttpServer().address() as AddressInfo).port);
  const warning = checked.secretsWarning;
  if (warning) logger.warn(`${ready}. ${warning}`, 'Bootstrap');
  else logger.log(ready, 'Bootstrap');
  reportEventLoopDelayOverIpc();

  // Nest's enableShutdownHooks() re-raises the signal after closing (exit status 143); the
  // contract wants: stop accepting, finish requests in flight (≤ 10 s), close the database, exit 0.
  let closing = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    logger.log(`${signal} received: finishing requests in flight, then exiting`, 'Bootstrap');
    setTimeout(() => {
      logger.error(`Requests still running after ${SHUTDOWN_GRACE_MS} ms: exiting anyway`, 'Bootstrap');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'Error while shutting down', 'Bootstrap');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

/** `Listening on http://127.0.0.1:3000; API docs at http://127.0.0.1:3000/api-docs`. */
function readyLine(host: string, port: number): string {
  const everywhere = host === '0.0.0.0' || host === '::';
  const name = everywhere ? 'localhost' : isIPv6(host) ? `[${host}]` : host;
  const url = `http://${name}:${port}`;
  const where = everywhere ? ` (every interface: HOST=${host})` : '';
  return `Listening on ${url}${where}; API docs at ${url}/api-docs`;
}

bootstrap().catch((error: unknown) => {
  if (error instanceof ConfigurationError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(
      `Failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
  }
  process.exit(1);
});
