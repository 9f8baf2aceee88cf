import type { FastifyReply, FastifyRequest } from 'fastify';

const ALLOWED_METHODS = 'GET,HEAD,PUT,PATCH,POST,DELETE';
const EXPOSED_HEADERS = 'x-request-id, retry-after, content-disposition';
const PREFLIGHT_MAX_AGE_S = '600';

/**
 * CORS for the origins of CORS_ORIGINS only, as one cheap check in the request hook (a request
 * without an Origin header, like every server-to-server call, costs nothing more). A preflight
 * from an allowed origin is answered here with 204; from any other origin it gets no CORS
 * headers, so the browser refuses it.
 * Returns true when the request was a preflight and has been answered.
 */
export function createCorsHandler(origins: readonly string[]) {
  const allowed = new Set(origins);
  return (request: FastifyRequest, reply: FastifyReply): boolean => {
    const origin = request.headers.origin;
    if (!origin) return false;
    const permitted = allowed.has(origin);
    if (permitted) {
      void reply
        .header('access-control-allow-origin', origin)
        .header('access-control-allow-credentials', 'true');
    }
    const preflight =
      request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
    if (!preflight) {
      if (permitted) void reply.header('access-control-expose-headers', EXPOSED_HEADERS);
      return false;
    }
    if (permitted) {
      void reply
        .header('access-control-allow-methods', ALLOWED_METHODS)
        .header('access-control-allow-headers', request.headers['access-control-request-headers'] ?? '')
        .header('access-control-max-age', PREFLIGHT_MAX_AGE_S);
    }
    void reply.code(204).header('content-length', '0').send();
    return true;
  };
}
