import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MalformedBodyError } from './json-body-parser';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * `text/plain` and `application/x-ndjson` bodies (the log shipper's text and NDJSON forms) as
 * strings: UTF-8 only, invalid UTF-8 is a 400. Routes that take JSON refuse them in validation
 * ("must be a JSON object"), as before.
 */
export function registerTextParsers(fastify: FastifyInstance): void {
  fastify.removeContentTypeParser('text/plain');
  fastify.addContentTypeParser(
    /^(text\/plain|application\/x-ndjson)(?:;|$)/,
    { parseAs: 'buffer' },
    (_request: FastifyRequest, body: Buffer, done: (err: Error | null, body?: unknown) => void) => {
      try {
        done(null, utf8.decode(body));
      } catch {
        done(new MalformedBodyError('Request body is not valid UTF-8'));
      }
    },
  );
}
