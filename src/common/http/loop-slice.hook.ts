import type { FastifyInstance } from 'fastify';
import { eventLoopSlice } from '../runtime/loop-slice';

/**
 * Before each handler, the request takes its place in the event loop's slice (LoopSlice): requests
 * that arrived in the same turn (40 log batches sent at once) are handled over several turns, so
 * those that arrive meanwhile (relay-status above all) are not kept waiting behind all of them.
 * After body parsing: a body is parsed when its last chunk arrives, whatever the turn.
 */
export function registerLoopSliceHook(fastify: FastifyInstance): void {
  fastify.addHook('preHandler', (_request, _reply, done) => eventLoopSlice.whenAllowed(done));
}
