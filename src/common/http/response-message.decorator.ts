import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';

/** What the envelope hook reads from a route's Fastify config (see response-envelope.hook.ts). */
export interface EnvelopeRouteConfig {
  /** The envelope's `msg` (and the one documented). */
  responseMessage?: string;
  /** Set when the handler's result chooses the `msg` (see ResponseMessage). */
  messageFor?: (data: unknown) => string;
  rawResponse?: boolean;
}

/** Merges into the handler's Fastify route config, so several decorators can each add their key. */
export function routeConfig(patch: object): MethodDecorator {
  return (_target, _key, descriptor) => {
    const handler = descriptor.value as object;
    const current = (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) ?? {}) as object;
    Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, { ...current, ...patch }, handler);
    return descriptor;
  };
}

/**
 * Wraps the handler's successful responses in the envelope, with this `msg`; or, given `pick`,
 * with the `msg` that `pick` chooses from what the handler returned (e.g. "Email already
 * verified"), `msg` staying the documented one. Handlers still return plain data.
 */
export const ResponseMessage = <T>(msg: string, pick?: (data: T) => string): MethodDecorator =>
  routeConfig(pick ? { responseMessage: msg, messageFor: pick } : { responseMessage: msg });

/** The handler writes its own body (text, CSV, a file): no envelope. Every handler has this or @ResponseMessage. */
export const RawResponse = () => routeConfig({ rawResponse: true });
