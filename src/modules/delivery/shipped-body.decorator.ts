import { BadRequestException, createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { OversizedJsonObject } from '../../common/http/oversized-json';
import type { ShippedForm } from './log-batches.service';

/** The log shipper's body as parsed (JSON value, or text for NDJSON and plain text) and which form it is. */
export const ShippedBody = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): { body: unknown; form: ShippedForm } => {
    const request = ctx.switchToHttp().getRequest<FastifyRequest>();
    const type = (request.headers['content-type'] ?? '').toLowerCase();
    const body = request.body;
    if (body instanceof OversizedJsonObject) throw body.tooManyFields();
    if (body === undefined || body === null || body === '') {
      throw new BadRequestException('Request body is empty');
    }
    if (typeof body === 'string') {
      return { body, form: type.startsWith('application/x-ndjson') ? 'ndjson' : 'text' };
    }
    return { body, form: 'json' };
  },
);
