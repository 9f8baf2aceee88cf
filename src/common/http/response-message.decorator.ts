import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';

/** What the envelope hook reads from a route's Fastify config (see response-envelope.hook.ts). */
export interface EnvelopeRouteConfig {
  responseMessage?: string;
  rawResponse?: boolean;
}

/** Merges into the handler's Fastify route config, so several decorators can each add their key. */
function routeConfig(patch: EnvelopeRouteConfig): MethodDecorator {
  return (_target, _key, descriptor) => {
    const handler = descriptor.value as object;
    const current = (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) ??
      {}) as EnvelopeRouteConfig;
    Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, { ...current, ...patch }, handler);
    return descriptor;
  };
}

/** Wraps the handler's successful responses in the envelope, with this `msg`. */
export const ResponseMessage = (msg: string) => routeConfig({ responseMessage: msg });

/** The handler writes its own body (text, CSV, a file): no envelope. Every handler has this or @ResponseMessage. */
export const RawResponse = () => routeConfig({ rawResponse: true });
