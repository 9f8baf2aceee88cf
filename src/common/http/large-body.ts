import type { FastifyInstance, onRequestHookHandler, preParsingHookHandler, RouteOptions } from 'fastify';
import { createGunzip } from 'node:zlib';
import { Permits } from '../async/permits';
import { waitForLoopSlice } from './loop-slice.hook';
import { routeConfig } from './response-message.decorator';

/** README.md "Bodies": log ingest and the webhooks take up to 10 MB, after inflating. */
export const LARGE_BODY_LIMIT_BYTES = 10 * 1024 * 1024;

export interface LargeBodyRouteConfig {
  /** The route's body limit in bytes. */
  largeBody?: number;
  /** A bulk feed's route (see BulkFeed): its bodies are read a few at a time. */
  bulkFeed?: true;
}

/**
 * The route takes bodies up to `limitBytes` (10 MB unless said), plain or `Content-Encoding:
 * gzip` (the webhooks, log ingest, sending by HTTP).
 */
export const LargeBody = (limitBytes: number = LARGE_BODY_LIMIT_BYTES) =>
  routeConfig({ largeBody: limitBytes } satisfies LargeBodyRouteConfig);

/**
 * Requests of the bulk feeds' routes (log batches, provider events) whose bodies are read, parsed
 * and applied at once; the others wait before their body is read. Applying is bounded anyway (a
 * few row-locking transactions on PostgreSQL, one at a time on SQLite), so a fleet's 50 batches at
 * once would otherwise wait as 50 parsed bodies: measured at 50 hosts shipping 1,000-line batches,
 * that was the service's largest live memory, and what the collector kept copying.
 */
export const BULK_FEED_BODIES_IN_FLIGHT = 8;
const bulkFeedBodies = new Permits(BULK_FEED_BODIES_IN_FLIGHT);

/** Bulk-feed requests past reading their body, and those waiting to begin (for tests and metrics). */
export const bulkFeedRequests = () => ({ inFlight: bulkFeedBodies.taken, waiting: bulkFeedBodies.queued });

/**
 * A bulk feed's route (an outside system's batches, posted by many senders at once): at most
 * BULK_FEED_BODIES_IN_FLIGHT of these requests are past reading their body; the others wait, their
 * bodies left in the connection (TCP holds the sender back), in arrival order.
 */
export const BulkFeed = () => routeConfig({ bulkFeed: true } satisfies LargeBodyRouteConfig);

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
    if ((route.config as LargeBodyRouteConfig).bulkFeed) {
      route.onRequest = [...[route.onRequest ?? []].flat(), takeBulkFeedPermit];
    }
  });
}

/** Waits for a bulk feed's permit before the body is read; gives it back once the response is over. */
const takeBulkFeedPermit: onRequestHookHandler = (_request, reply, done) => {
  let over = false;
  let release: (() => void) | undefined;
  // 'close' follows 'finish' on a response, and comes alone when the client goes away (waiting included).
  reply.raw.once('close', () => {
    over = true;
    release?.();
  });
  void bulkFeedBodies.run(
    () =>
      new Promise<void>((released) => {
        if (over) released();
        else release = released;
        done();
      }),
  );
};

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
