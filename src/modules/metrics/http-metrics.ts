import type { FastifyInstance } from 'fastify';
import { httpRequestDuration } from './metrics';

/** The route label of a request no route matched (404s of unknown paths): one series, not one per path. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Counts every response with its duration, labelled by method, the route's pattern
 * (`routeOptions.url`, e.g. `/api/v1/companies/:uuid`) and status. Never the request's path:
 * tokens live in paths (`/public/company/script/:token`), and paths are unbounded. One
 * histogram observation per response, on a child cached per label set.
 */
export function registerHttpMetrics(fastify: FastifyInstance): void {
  type Child = ReturnType<typeof httpRequestDuration.labels>;
  const children = new Map<string, Child>();
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
    const key = `${request.method} ${reply.statusCode} ${route}`;
    let child = children.get(key);
    if (!child) {
      child = httpRequestDuration.labels(request.method, route, String(reply.statusCode));
      children.set(key, child);
    }
    child.observe(reply.elapsedTime / 1000);
    done();
  });
}
