import { fastifyMultipart, FastifyMultipartOptions } from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/**
 * @fastify/multipart without its two per-request hooks. Those hooks only clean up files saved
 * to disk (its disk mode); this service reads uploads into memory (`request.file()`), never to
 * disk, and the hooks cost every request about a tenth of its time.
 */
export const inMemoryMultipart = fp<FastifyMultipartOptions>(
  (instance, options, done) => {
    const withoutCleanupHooks = new Proxy(instance, {
      get(target, property, receiver) {
        if (property !== 'addHook') return Reflect.get(target, property, receiver) as unknown;
        return (name: string, ...rest: unknown[]) =>
          name === 'onRequest' || name === 'onResponse'
            ? target
            : (target.addHook as (...args: unknown[]) => FastifyInstance)(name, ...rest);
      },
    });
    fastifyMultipart(withoutCleanupHooks, options, done);
  },
  { fastify: '5.x', name: 'in-memory-multipart' },
);
