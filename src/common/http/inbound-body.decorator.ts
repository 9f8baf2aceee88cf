import { BadRequestException, createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { sha256Hex } from '../secrets';
import { jsonTextDigest } from './json-body-parser';
import { refuseDeepNesting } from './json-depth';
import { OversizedJsonObject } from './oversized-json';

/** How an inbound body came: a JSON value, or text (NDJSON or plain lines) left unparsed. */
export type InboundBodyForm = 'json' | 'ndjson' | 'text';

export interface InboundBodyValue {
  body: unknown;
  form: InboundBodyForm;
  /** SHA-256 (hex) of the body's text as it came: what a copy of it has too. */
  readonly digest: () => string;
}

export interface InboundBodyRules {
  /** The JSON values taken: an object alone, or an object or an array. */
  json: 'object' | 'object-or-array';
  /** Text bodies (NDJSON, plain text) taken as they came, as a string. */
  text?: boolean;
}

/**
 * The body of what an outside system sends (a webhook, a log batch) as it came: not run through
 * the validation pipe (a custom parameter is not validated), so the sender's extra fields are
 * kept rather than refused, and stored raw before it is applied. Only its shape is checked:
 * the forms the route takes, JSON nested at most MAX_JSON_DEPTH levels, a JSON object with too
 * many fields refused. Every refusal is a 400 in the envelope.
 */
export const InboundBody = createParamDecorator(
  (rules: InboundBodyRules, ctx: ExecutionContext): InboundBodyValue => {
    const request = ctx.switchToHttp().getRequest<FastifyRequest>();
    const body = request.body;
    if (body instanceof OversizedJsonObject) throw body.tooManyFields();
    if (body === undefined || body === null || body === '') {
      throw new BadRequestException('Request body is empty');
    }
    if (typeof body === 'string' && rules.text) {
      const type = (request.headers['content-type'] ?? '').toLowerCase();
      return {
        body,
        form: type.startsWith('application/x-ndjson') ? 'ndjson' : 'text',
        digest: () => sha256Hex(body),
      };
    }
    const shapeTaken = typeof body === 'object' && (rules.json === 'object-or-array' || !Array.isArray(body));
    if (!shapeTaken) {
      throw new BadRequestException(
        rules.json === 'object'
          ? 'Request body must be a JSON object'
          : 'Request body must be a JSON object or array',
      );
    }
    refuseDeepNesting(body);
    return {
      body,
      form: 'json',
      digest: () => jsonTextDigest(request) ?? sha256Hex(JSON.stringify(body)),
    };
  },
);
