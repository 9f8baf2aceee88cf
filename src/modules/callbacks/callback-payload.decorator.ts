import { BadRequestException, createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { OversizedJsonObject } from '../../common/http/oversized-json';

const MAX_DEPTH = 32;

/**
 * The JSON body of a callback as the sender wrote it: a plain object, not run through the
 * validation pipe (a custom parameter is not validated), so the sender's extra fields are kept
 * rather than refused. Only the shape is checked here: an object, nested at most 32 levels.
 */
export const CallbackPayload = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): Record<string, unknown> => {
    const body = ctx.switchToHttp().getRequest<FastifyRequest>().body;
    if (body instanceof OversizedJsonObject) throw body.tooManyFields();
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      throw new BadRequestException('Request body must be a JSON object');
    }
    if (depthOf(body, 0) > MAX_DEPTH) throw new BadRequestException('Request body is nested too deeply');
    return body as Record<string, unknown>;
  },
);

function depthOf(value: unknown, depth: number): number {
  if (depth > MAX_DEPTH || !value || typeof value !== 'object') return depth;
  let deepest = depth;
  for (const child of Object.values(value)) deepest = Math.max(deepest, depthOf(child, depth + 1));
  return deepest;
}
