import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Params } from 'nestjs-pino';
import pino, { LogFn, Logger, LoggerOptions } from 'pino';
import type PinoPretty from 'pino-pretty';
import type { AppConfig } from '../../config/app-config';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The id of the request being handled (bindRequestContext), put on every log line by the root logger's mixin. */
const requestIds = new AsyncLocalStorage<string>();

/** pino's `mixin` (a new object each line: pino merges the line into it): `reqId` while a request is handled. */
function requestIdMixin(): object {
  const reqId = requestIds.getStore();
  return reqId === undefined ? {} : { reqId };
}

/**
 * Fastify's request id: taken from `x-request-id` when it is a sane token, generated otherwise.
 * configureApp echoes it on every response and binds it to every log line of the request.
 */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/** Every place a credential can appear in a log line (pino `redact`). */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers["x-callback-token"]',
  '*.password',
  '*.currentPassword',
  '*.newPassword',
  '*.token',
  '*.accessToken',
  '*.refreshToken',
  '*.relayPassword',
  '*.passwordHash',
];

/** A path whose rest is a credential (quality.md: the script URL's token), in any case and after any prefix. */
const CREDENTIAL_IN_PATH = /^(.*?\/public\/company\/script\/).*$/is;

/**
 * The path of a request as it is logged: without its query string, and with the credential of
 * a path that carries one (`/public/company/script/:token`) replaced by `[REDACTED]`.
 */
export function loggedPath(url: string): string {
  const path = url.split('?')[0];
  return path.replace(CREDENTIAL_IN_PATH, '$1[REDACTED]');
}

/**
 * Nest's account of its start: each module initialised, each controller and route mapped (about
 * 200 lines). Logged at debug, not info: shown with LOG_LEVEL=debug, not before the ready line.
 */
const NEST_MAPPING_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

/**
 * Log lines for a person rather than a log shipper: when standard output is a terminal and
 * NODE_ENV is development. Production and tests (NODE_ENV=test), and any output that is not a
 * terminal (a pipe, a file, a container's log), keep JSON lines.
 */
export function humanReadableLogs(
  config: Pick<AppConfig, 'env'>,
  stdout: { isTTY?: boolean } = process.stdout,
): boolean {
  return stdout.isTTY === true && config.env.NODE_ENV === 'development';
}

/** One line per record: `HH:MM:ss.l LEVEL: Context: message`; a request's line as method, path, status, time. */
function prettyMessage(log: Record<string, unknown>, messageKey: string): string {
  const req = log.req as { method?: string; path?: string } | undefined;
  const res = log.res as { statusCode?: number } | undefined;
  if (req?.method && res?.statusCode !== undefined) {
    return `${req.method} ${req.path} ${res.statusCode} ${String(log.responseTime)} ms`;
  }
  const context = typeof log.context === 'string' ? `${log.context}: ` : '';
  const request = typeof log.reqId === 'string' && Number(log.level) >= 50 ? ` (request ${log.reqId})` : '';
  const message = log[messageKey];
  return `${context}${typeof message === 'string' ? message : JSON.stringify(message ?? '')}${request}`;
}

/**
 * The one pino logger of the process: redaction, level from LOG_LEVEL, Nest's module and route
 * mapping at debug; JSON lines, or pino-pretty's lines on a terminal in development (in this
 * thread and synchronous, so nothing printed before an exit is lost; written after redaction).
 */
export function createRootLogger(config: AppConfig, stdout: { isTTY?: boolean } = process.stdout): Logger {
  const options: LoggerOptions = {
    level: config.logLevel,
    mixin: requestIdMixin,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    hooks: {
      logMethod(args, method, level) {
        const first: unknown = args[0];
        if (
          level === pino.levels.values.info &&
          typeof first === 'object' &&
          first !== null &&
          NEST_MAPPING_CONTEXTS.has((first as { context?: unknown }).context as string)
        ) {
          const debug: LogFn = this.debug;
          debug.apply(this, args);
          return;
        }
        method.apply(this, args);
      },
    },
  };
  if (!humanReadableLogs(config, stdout)) return pino(options);
  // Loaded only here: a production start does not pay for it (~30 ms).
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on a terminal only
  const pretty = require('pino-pretty') as typeof PinoPretty;
  return pino(
    options,
    pretty({
      sync: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,context,reqId,req,res,responseTime',
      messageFormat: prettyMessage,
    }),
  );
}

/**
 * nestjs-pino serves as Nest's logger (app.useLogger) and PinoLogger, on our root logger. Its
 * per-request middleware (pino-http through middie) is not used: it cost more than half of a
 * bare request's time. The request context comes from bindRequestLogging below instead.
 */
export function loggerOptions(root: Logger): Params {
  return { pinoHttp: { logger: root, autoLogging: false }, forRoutes: [] };
}

export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/**
 * One hook per request for what every response and log line carries: the static security
 * headers and `x-request-id` on the response, the request id on every log line written while
 * the request is handled (the root logger's mixin), and one closing line per request: method,
 * path (no query string, credentials in it replaced: loggedPath), status and time. Headers and
 * bodies are never logged.
 */
export function bindRequestContext(
  fastify: FastifyInstance,
  root: Logger,
  staticHeaders: Record<string, string>,
  cors: (request: FastifyRequest, reply: FastifyReply) => boolean,
): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.headers(staticHeaders).header('x-request-id', request.id);
    if (cors(request, reply)) return; // a preflight, answered
    requestIds.run(request.id, done);
  });
  if (!root.isLevelEnabled('info')) return;
  fastify.addHook('onResponse', (request: FastifyRequest, reply, done) => {
    root.info(
      {
        reqId: request.id,
        req: { method: request.method, path: loggedPath(request.url) },
        res: { statusCode: reply.statusCode },
        responseTime: Math.round(reply.elapsedTime),
      },
      'request completed',
    );
    done();
  });
}
