import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { NestApplicationOptions } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { registerStrictJsonParser } from './common/http/json-body-parser';
import { createCorsHandler } from './common/http/cors';
import { answerClientError, answerFrameworkError } from './common/http/framework-errors';
import { registerLargeBodyRoutes } from './common/http/large-body';
import { registerTextParsers } from './common/http/text-body-parser';
import { inMemoryMultipart } from './common/http/in-memory-multipart';
import { registerResponseEnvelope } from './common/http/response-envelope.hook';
import { securityHeaders } from './common/http/security-headers';
import { registerHttpMetrics } from './modules/metrics/http-metrics';
import { withExamples } from './common/swagger/openapi-examples';
import { OPENAPI_TAGS } from './common/swagger/openapi-tags';
import { bindRequestContext, requestIdOf, ROOT_LOGGER } from './common/logging/logger.options';
import { AppConfig } from './config/app-config';
import { MULTIPART_LIMITS } from './modules/billings/proof-upload';

/** JSON bodies up to 1 MB (the log-ingest and webhook routes raise their own limit). */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/** Nest's own JSON parser is off: configureApp registers a stricter one (UTF-8, prototype keys). */
export const NEST_APP_OPTIONS: NestApplicationOptions = { bodyParser: false, bufferLogs: true };

/**
 * The Fastify server, built before the Nest app (and so before its AppConfig provider) exists:
 * what it needs of the configuration comes from the same validated AppConfig, read from the
 * environment here unless the caller passes the one it already has.
 */
export function createFastifyAdapter(
  config: Pick<AppConfig, 'env'> = AppConfig.fromEnv(process.env, { warn: () => undefined }),
): FastifyAdapter {
  return new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: requestIdOf,
    trustProxy: config.env.TRUST_PROXY,
    // Request ids and request logging: bindRequestContext in configureApp (one id per request, on every line).
    logger: false,
    // No Express-style middleware anywhere: middie would add its cost to every request.
    skipMiddie: true,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
  });
}

/**
 * Everything the production server has beyond the module graph: used by main.ts and by every
 * e2e test, so tests run the same pipeline as production.
 */
export async function configureApp(app: NestFastifyApplication): Promise<NestFastifyApplication> {
  const config = app.get(AppConfig);
  app.useLogger(app.get(Logger));
  app.flushLogs();

  const fastify = app.getHttpAdapter().getInstance();
  registerStrictJsonParser(fastify);
  registerTextParsers(fastify);
  registerLargeBodyRoutes(fastify);
  // Vary: Origin on every response, since CORS headers depend on it.
  const staticHeaders = { ...securityHeaders(), vary: 'Origin' };
  bindRequestContext(fastify, app.get(ROOT_LOGGER), staticHeaders, createCorsHandler(config.corsOrigins));
  registerResponseEnvelope(fastify);
  // Requests by route pattern and status, with their latency (GET /metrics).
  registerHttpMetrics(fastify);

  // Uploads (payment proofs): streamed, limits enforced while streaming, kept in memory.
  await app.register(inMemoryMultipart, { limits: MULTIPART_LIMITS });

  // Built at the first request for it (@nestjs/swagger's document factory), not at start: scanning
  // every route is a tenth of the start, and the processes that serve traffic rarely show the docs.
  const document = () => withExamples(SwaggerModule.createDocument(app, buildOpenApiConfig()));
  SwaggerModule.setup('api-docs', app, document, {
    jsonDocumentUrl: 'api-docs-json',
    customSiteTitle: 'Email Relay Service API',
    // A token given to Authorize survives a reload of the page; the operations can be filtered by tag.
    swaggerOptions: { persistAuthorization: true, filter: true },
  });
  return app;
}

function buildOpenApiConfig() {
  const builder = new DocumentBuilder()
    .setTitle('Email Relay Service')
    .setDescription(
      'The API of the email relay platform. Every JSON response is an envelope ' +
        '`{ status, code, msg, data }` (failures add `error: { msg, details?, omittedDetails? }`).\n\n' +
        'To call the bearer routes: `POST /api/v1/users/login` (or `/api/v1/admins/login`) answers an ' +
        '`accessToken`; give it to Authorize. It lasts `JWT_ACCESS_TTL` (60 s by default); ' +
        '`POST /api/v1/refresh` with the `refreshToken` gives a new one without logging in again ' +
        '(logins are limited to 10 a minute). Authorize remembers the token across reloads of this page.\n\n' +
        "A company's software uses an API key instead (`Authorization: Bearer rk_…`, made by the owner " +
        'with `POST /api/v1/api-keys`): it does not expire unless asked to, and opens the routes that ' +
        'list `customer-api-key` among their security schemes, as its scope allows.',
    )
    .setVersion('1')
    // Relative: the API is wherever this document was served from (any host, behind any proxy).
    .addServer('/', 'This service, at the address the document was served from')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'bearer')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'rk_…',
        description:
          "A company's API key (`POST /api/v1/api-keys`), on the customer routes its scope opens: " +
          '`read`, `sending` or `full`.',
      },
      'customer-api-key',
    )
    .addBasicAuth({ type: 'http', scheme: 'basic' }, 'basic')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'x-api-key' }, 'api-key')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'x-callback-token' }, 'callback-token')
    .addSecurity('metrics-token', { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN' });
  for (const tag of OPENAPI_TAGS) builder.addTag(tag.name, tag.description);
  return builder.build();
}
