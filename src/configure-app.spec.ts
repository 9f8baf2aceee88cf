import { AppConfig } from './config/app-config';
import { createFastifyAdapter } from './configure-app';

const quiet = { warn: () => undefined };

/** The client IP Fastify reports for a request from 10.0.0.1 through a proxy that adds X-Forwarded-For. */
async function clientIp(adapter: ReturnType<typeof createFastifyAdapter>): Promise<string> {
  const fastify = adapter.getInstance();
  fastify.get('/ip', (request) => ({ ip: request.ip }));
  try {
    const res = await fastify.inject({
      method: 'GET',
      url: '/ip',
      remoteAddress: '10.0.0.1',
      headers: { 'x-forwarded-for': '203.0.113.9' },
    });
    return res.json<{ ip: string }>().ip;
  } finally {
    await fastify.close();
  }
}

describe('createFastifyAdapter', () => {
  it('trusts X-Forwarded-For only when AppConfig says TRUST_PROXY=true', async () => {
    expect(await clientIp(createFastifyAdapter(AppConfig.fromEnv({ TRUST_PROXY: 'true' }, quiet)))).toBe(
      '203.0.113.9',
    );
    expect(await clientIp(createFastifyAdapter(AppConfig.fromEnv({ TRUST_PROXY: 'false' }, quiet)))).toBe(
      '10.0.0.1',
    );
    expect(await clientIp(createFastifyAdapter(AppConfig.fromEnv({}, quiet)))).toBe('10.0.0.1');
  });

  it('reads the environment through AppConfig when no config is passed (as main.ts and the e2e tests call it)', async () => {
    const saved = process.env.TRUST_PROXY;
    try {
      process.env.TRUST_PROXY = 'true';
      expect(await clientIp(createFastifyAdapter())).toBe('203.0.113.9');
      // Not a boolean: AppConfig refuses it, instead of quietly reading it as false.
      process.env.TRUST_PROXY = 'yes';
      expect(() => createFastifyAdapter()).toThrow(/TRUST_PROXY/);
    } finally {
      if (saved === undefined) delete process.env.TRUST_PROXY;
      else process.env.TRUST_PROXY = saved;
    }
  });
});
