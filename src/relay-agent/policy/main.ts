import { INestApplicationContext } from '@nestjs/common';
import { main } from '../main';
import { policyServer } from '../relay-agent';
import { PolicyServer } from './policy-server';

/** Starts the policy service alone on 127.0.0.1:`port` (0: any free one), for tests. */
export async function startPolicyServer(
  app: INestApplicationContext,
  port: number,
): Promise<{ server: PolicyServer; port: number }> {
  const server = policyServer(app);
  return { server, port: await server.listen(port) };
}

/**
 * `node dist/relay-agent/policy/main.js` (before the move, `node dist/policy-server/main.js`): the
 * relay agent, the same program as `node dist/relay-agent/main.js`.
 */
if (require.main === module) main();
