import type { FastifyInstance, FastifyRequest } from 'fastify';
import secureJsonParse from 'secure-json-parse';

const utf8 = new TextDecoder('utf-8', { fatal: true });

export class MalformedBodyError extends Error {
  readonly statusCode = 400;
  readonly code = 'MALFORMED_BODY';
}

/**
 * JSON bodies: invalid UTF-8, bad JSON and prototype-poisoning keys (`__proto__`,
 * `constructor.prototype`) are refused with a 400 before any handler sees them.
 */
export function registerStrictJsonParser(fastify: FastifyInstance): void {
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser(
    /^application\/([\w.+-]+\+)?json$/,
    { parseAs: 'buffer' },
    (_req: FastifyRequest, body: Buffer, done: (err: Error | null, body?: unknown) => void) => {
      if (body.length === 0)
        return done(new MalformedBodyError('Request body is empty but content-type is JSON'));
      let text: string;
      try {
        text = utf8.decode(body);
      } catch {
        return done(new MalformedBodyError('Request body is not valid UTF-8'));
      }
      try {
        done(
          null,
          secureJsonParse.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }),
        );
      } catch (e) {
        const forbidden = e instanceof Error && /forbidden prototype/i.test(e.message);
        const reason = forbidden
          ? 'Forbidden key (__proto__ or constructor.prototype) in request body'
          : 'Malformed JSON in request body';
        done(new MalformedBodyError(reason));
      }
    },
  );
}
