import type { FastifyInstance, preParsingHookHandler, RouteOptions } from 'fastify';
import { createGunzip } from 'node:zlib';
import { waitForLoopSlice } from './loop-slice.hook';
import { routeConfig } from './response-message.decorator';

/** README.md "Bodies": log ingest and the webhooks take up to 10 MB, after inflating. */
export const LARGE_BODY_LIMIT_BYTES = 10 * 1024 * 1024;

export interface LargeBodyRouteConfig {
  /** The route's body limit in bytes. */
  largeBody?: number;
}

/**
 * The route takes bodies up to `limitBytes` (10 MB unless said), plain or `Content-Encoding:
 * gzip` (the webhooks, log ingest, sending by HTTP).
 */
export const LargeBody = (limitBytes: number = LARGE_BODY_LIMIT_BYTES) =>
  routeConfig({ largeBody: limitBytes } satisfies LargeBodyRouteConfig);

/**
 * Gives every @LargeBody route its limit, its gzip decoding and its wait for the event loop's
 * slice (waitForLoopSlice); call before the routes are registered (configureApp runs before
 * app.init()). Fastify counts the inflated bytes against the limit while they stream, so a gzip
 * bomb stops at 10 MB with a 413, never in memory.
 */
export function registerLargeBodyRoutes(fastify: FastifyInstance): void {
  fastify.addHook('onRoute', (route: RouteOptions) => {
    const limit = (route.config as LargeBodyRouteConfig | undefined)?.largeBody;
    if (!limit) return;
    route.bodyLimit = limit;
    const hooks = [route.preParsing ?? []].flat();
    route.preParsing = [...hooks, inflateGzip];
    route.preHandler = [...[route.preHandler ?? []].flat(), waitForLoopSlice];
  });
}

class UnsupportedEncodingError extends Error {
  readonly statusCode = 415;
  readonly code = 'UNSUPPORTED_CONTENT_ENCODING';
}

const inflateGzip: preParsingHookHandler = (request, _reply, payload, done) => {
  const encoding = request.headers['content-encoding']?.trim().toLowerCase();
  if (!encoding || encoding === 'identity') return done(null, payload);
  if (encoding !== 'gzip' && encoding !== 'x-gzip') {
    return done(
      new UnsupportedEncodingError(
        `Unsupported Content-Encoding "${encoding.slice(0, 40)}" (gzip is accepted)`,
      ),
    );
  }
  // The inflated stream also counts the compressed bytes read, for Fastify's Content-Length check.
  const gunzip = Object.assign(createGunzip(), { receivedEncodedLength: 0 });
  payload.on('data', (chunk: Buffer) => {
    gunzip.receivedEncodedLength += chunk.length;
  });
  payload.on('error', (err) => gunzip.destroy(err));
  gunzip.on('error', (err: Error & { statusCode?: number }) => {
    if (err.statusCode === undefined) {
      err.message = 'Request body is not valid gzip';
      err.statusCode = 400;
    }
  });
  payload.pipe(gunzip);
  done(null, gunzip);
};
