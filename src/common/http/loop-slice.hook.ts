import type { preHandlerHookHandler } from 'fastify';
import { eventLoopSlice } from '../runtime/loop-slice';

/**
 * Before its handler, a bulk request (a @LargeBody route: log batches, provider events) takes its
 * place in the event loop's slice (LoopSlice): batches that arrived in the same turn (40 sent at
 * once) are handled over several turns, so the requests that arrive meanwhile (relay-status
 * above all) are not kept waiting behind all of them. Small requests do not wait for a slice:
 * they would queue behind the bulk work they are meant to overtake. After body parsing: a body
 * is parsed when its last chunk arrives, whatever the turn.
 */
export const waitForLoopSlice: preHandlerHookHandler = (_request, _reply, done) =>
  eventLoopSlice.whenAllowed(done);
