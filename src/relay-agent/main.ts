import 'dotenv/config';
// Before anything queues work on the libuv pool: it sizes the pool (argon2's memory, see there).
import '../common/runtime/thread-pool';
// Before argon2's first hash: glibc then returns its 19 MiB blocks (see there).
import '../common/runtime/malloc-threshold';
// Before the application allocates: bounds the garbage V8 lets the heap hold (see there).
import '../common/runtime/heap-growth';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { AppConfig, ConfigurationError } from '../config/app-config';
import { RelayAgentModule } from './relay-agent.module';
import { configuredPorts, startRelayAgent } from './relay-agent';

/** How long SIGTERM waits for answers in flight before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * `npm run relay-agent` (and its older name `npm run policy-server`): what a stock Postfix talks
 * to beside it, on the same database as the API. main.cf: docs/operator-guide.md, "Postfix in front of the service".
 */
async function bootstrap(): Promise<void> {
  AppConfig.fromEnv(process.env, { warn: () => undefined }, { keepGeneratedSecrets: true });
  const app = await NestFactory.createApplicationContext(RelayAgentModule, { bufferLogs: true });
  const logger = app.get(Logger);
  app.useLogger(logger);
  const config = app.get(AppConfig);
  const agent = await startRelayAgent(app, config.env.RELAY_AGENT_HOST, configuredPorts(config));

  let closing = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    logger.log(`${signal} received: answering requests in flight, then exiting`, 'RelayAgent');
    setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS).unref();
    agent
      .close()
      .then(() => app.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

/** Runs the agent until SIGTERM; a configuration problem is printed alone, then exit 1. */
export function main(): void {
  bootstrap().catch((error: unknown) => {
    if (error instanceof ConfigurationError) console.error(error.message);
    else console.error(error);
    process.exit(1);
  });
}

if (require.main === module) main();
