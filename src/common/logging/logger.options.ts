import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Params } from 'nestjs-pino';
import { storage, Store } from 'nestjs-pino/storage';
import pino, { Logger } from 'pino';
import type { AppConfig } from '../../config/app-config';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

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

/** The one pino logger of the process (JSON lines, redaction, level from LOG_LEVEL). */
export function createRootLogger(config: AppConfig): Logger {
  return pino({ level: config.logLevel, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } });
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

/** The request's log context: a child logger with the request id, made only if something logs. */
function requestStore(root: Logger, reqId: string): Store {
  let child: Logger | undefined;
  return {
    get logger(): Logger {
      return (child ??= root.child({ reqId }));
    },
  };
}

/**
 * One hook per request for what every response and log line carries: the static security
 * headers and `x-request-id` on the response, the request id on every log line written while
 * the request is handled (nestjs-pino's storage), and one closing line per request: method,
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
    storage.run(requestStore(root, request.id), done);
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
