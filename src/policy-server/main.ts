import 'dotenv/config';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { AppConfig, ConfigurationError } from '../config/app-config';
import { RelayDecisionService } from '../modules/internal/relay-decision.service';
import { PolicyServer } from './policy-server';
import { PolicyServerModule } from './policy-server.module';

/** How long SIGTERM waits for answers in flight before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 10_000;

/** Starts the policy server on `port` (0: any free one) with the application's relay decision. */
export async function startPolicyServer(
  app: INestApplicationContext,
  port: number,
): Promise<{ server: PolicyServer; port: number }> {
  const decisions = app.get(RelayDecisionService);
  const server = new PolicyServer((query) => decisions.decide(query));
  return { server, port: await server.listen(port) };
}

/**
 * `npm run policy-server`: Postfix's policy service on 127.0.0.1:POLICY_PORT, answering from the
 * same relay decision as `POST /api/internal/relay-status`, on the same database. main.cf:
 * `smtpd_relay_restrictions = check_policy_service inet:127.0.0.1:10040, reject`.
 */
async function bootstrap(): Promise<void> {
  AppConfig.fromEnv(process.env, { warn: () => undefined });
  const app = await NestFactory.createApplicationContext(PolicyServerModule, { bufferLogs: true });
  const logger = app.get(Logger);
  app.useLogger(logger);
  const { server, port } = await startPolicyServer(app, app.get(AppConfig).env.POLICY_PORT);
  logger.log(`Postfix policy server listening on 127.0.0.1:${port}`, 'PolicyServer');

  let closing = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    logger.log(`${signal} received: answering requests in flight, then exiting`, 'PolicyServer');
    setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS).unref();
    server
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

if (require.main === module) {
  bootstrap().catch((error: unknown) => {
    if (error instanceof ConfigurationError) console.error(error.message);
    else console.error(error);
    process.exit(1);
  });
}
