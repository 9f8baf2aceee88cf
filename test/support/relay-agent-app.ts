import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { dirname } from 'node:path';
import { RelayAgentModule } from '../../src/relay-agent/relay-agent.module';
import { TestApp } from './test-app';

/**
 * The relay agent's application (RelayAgentModule, what `npm run relay-agent` loads) on the
 * database of the API under test, as production runs the two side by side: what the API changes
 * reaches it only as other processes hear of it. `env` adds to (or overrides) its environment.
 */
export async function relayAgentApplication(
  t: TestApp,
  env: Record<string, string> = {},
): Promise<INestApplicationContext> {
  const options = t.dataSource.options;
  const database =
    options.type === 'postgres'
      ? { DATABASE_URL: String(options.url) }
      : { DATA_DIR: dirname(String(options.database)), DATABASE_URL: '' };
  const saved = { ...process.env };
  Object.assign(process.env, { NODE_ENV: 'test', LOG_LEVEL: 'silent', REDIS_URL: '', ...database, ...env });
  try {
    return await NestFactory.createApplicationContext(RelayAgentModule, { logger: false });
  } finally {
    process.env = saved;
  }
}
