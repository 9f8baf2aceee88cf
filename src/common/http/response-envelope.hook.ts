import type { FastifyInstance } from 'fastify';
import type { SuccessEnvelope } from './envelope';
import type { EnvelopeRouteConfig } from './response-message.decorator';

/**
 * Wraps what a handler returns in the success envelope, with the `msg` of its
 * @ResponseMessage (or the one its `pick` chooses from the payload: one function call, only
 * on the routes that declare one). Only routes with that decorator are wrapped: every handler
 * of the service has it or @RawResponse() (a test holds them to it), and routes registered on
 * Fastify by others (the OpenAPI document's) have neither. Failures never reach it wrapped
 * twice: the exception filter sends its envelope with a 4xx/5xx status, which this hook
 * passes through.
 *
 * Why a Fastify preSerialization hook and not a Nest interceptor: Nest runs any interceptor
 * through rxjs and AsyncResource for every request, and measured here that was three quarters
 * of a request's CPU time (GET /health/live: ~100 µs with the interceptor, ~25 µs without), far
 * outside the ceiling budget of quality.md. The hook does the same job at the point where the
 * payload is serialized anyway. Strings, buffers and streams (files, scripts, CSV) never
 * reach a preSerialization hook.
 */
export function registerResponseEnvelope(fastify: FastifyInstance): void {
  fastify.addHook('preSerialization', (request, reply, payload, done) => {
    const config = request.routeOptions.config as EnvelopeRouteConfig;
    const msg = config.responseMessage;
    if (reply.statusCode >= 400 || msg === undefined) return done(null, payload);
    const envelope: SuccessEnvelope = {
      status: 'success',
      code: reply.statusCode,
      msg: config.messageFor ? config.messageFor(payload) : msg,
      data: payload ?? {},
    };
    done(null, envelope);
  });
}
