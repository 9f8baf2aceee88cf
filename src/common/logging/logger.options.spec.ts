import pino, { Logger } from 'pino';
import { AppConfig } from '../../config/app-config';
import { createRootLogger, humanReadableLogs } from './logger.options';

const quiet = { warn: () => undefined };
const config = (env: NodeJS.ProcessEnv) => AppConfig.fromEnv(env, quiet);

/** What the logger writes (its destination stream), as parsed JSON lines. */
function capture(logger: Logger): Array<Record<string, unknown>> {
  const lines: Array<Record<string, unknown>> = [];
  (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] = {
    write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
  };
  return lines;
}

describe('Root logger', () => {
  it('writes human-readable lines only on a terminal in development', () => {
    const tty = { isTTY: true };
    expect(humanReadableLogs(config({}), tty)).toBe(true);
    expect(humanReadableLogs(config({}), { isTTY: false })).toBe(false);
    expect(humanReadableLogs(config({}), {})).toBe(false);
    expect(humanReadableLogs(config({ NODE_ENV: 'test' }), tty)).toBe(false);
    const production = config({
      NODE_ENV: 'production',
      JWT_ACCESS_SECRET: 'a'.repeat(32),
      JWT_REFRESH_SECRET: 'b'.repeat(32),
      JWT_VERIFICATION_SECRET: 'c'.repeat(32),
      JWT_RESET_SECRET: 'd'.repeat(32),
      ENCRYPTION_KEY: Buffer.alloc(32).toString('base64'),
    });
    expect(humanReadableLogs(production, tty)).toBe(false);
  });

  it("logs Nest's module and route mapping at debug, everything else at its own level", () => {
    const info = createRootLogger(config({ LOG_LEVEL: 'info' }), { isTTY: false });
    const lines = capture(info);
    info.info({ context: 'InstanceLoader' }, 'AppModule dependencies initialized');
    info.info({ context: 'RoutesResolver' }, 'AdminsController {/api/v1/admins}:');
    info.info({ context: 'RouterExplorer' }, 'Mapped {/api/v1/admins/login, POST} route');
    info.info({ context: 'Bootstrap' }, 'Listening');
    info.warn({ context: 'RouterExplorer' }, 'a warning stays one');
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [30, 'Listening'],
      [40, 'a warning stays one'],
    ]);

    const debug = createRootLogger(config({ LOG_LEVEL: 'debug' }), { isTTY: false });
    const all = capture(debug);
    debug.info({ context: 'RouterExplorer' }, 'Mapped {/api/v1/admins/login, POST} route');
    expect(all).toEqual([
      expect.objectContaining({
        level: 20,
        context: 'RouterExplorer',
        msg: 'Mapped {/api/v1/admins/login, POST} route',
      }),
    ]);
  });

  it('keeps credentials out of its lines', () => {
    const logger = createRootLogger(config({ LOG_LEVEL: 'info' }), { isTTY: false });
    const lines = capture(logger);
    logger.info({ body: { password: 'hunter2-hunter2' } }, 'login');
    expect(JSON.stringify(lines)).not.toContain('hunter2');
  });
});
