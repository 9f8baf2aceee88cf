import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hash } from 'node:crypto';
import secureJsonParse from 'secure-json-parse';
import type { LargeBodyRouteConfig } from './large-body';
import { checkFieldCounts } from './oversized-json';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** `application/json` and `application/<x>+json`, with or without parameters (Fastify lower-cases the type). */
const JSON_MEDIA_TYPE = /^application\/([\w.+-]+\+)?json(?:;|$)/;
/** JSON is UTF-8 (RFC 8259); US-ASCII is a subset of it. */
const CHARSET = /;\s*charset="?([^";\s]*)"?/i;
const UTF8_CHARSETS = new Set(['utf-8', 'utf8', 'us-ascii']);
/** A `\u` escape of a UTF-16 surrogate: only such escapes can produce ill-formed strings. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The SHA-256 (hex) of each bulk feed's JSON text, taken while it is at hand (see jsonTextDigest). */
const digests = new WeakMap<FastifyRequest, string>();

/**
 * The SHA-256 (hex) of a bulk feed's JSON body (@BulkFeed) as it came (after inflating): what a
 * log batch is deduplicated on, without writing the parsed value out again. Undefined for other
 * routes and bodies.
 */
export const jsonTextDigest = (request: FastifyRequest): string | undefined => digests.get(request);

export class MalformedBodyError extends Error {
  readonly statusCode: number = 400;
  readonly code: string = 'MALFORMED_BODY';
}

class UnsupportedBodyError extends MalformedBodyError {
  override readonly statusCode = 415;
  override readonly code = 'UNSUPPORTED_BODY';
}

/**
 * JSON bodies (README.md "Bodies"): any case and any parameters of the media type; a charset
 * other than UTF-8, or a content-encoding on a route that takes none, is a 415; invalid UTF-8,
 * bad JSON, prototype-poisoning keys (`__proto__`, `constructor.prototype`) and lone UTF-16
 * surrogates are a 400, all before any handler sees the body.
 */
export function registerStrictJsonParser(fastify: FastifyInstance): void {
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser(
    JSON_MEDIA_TYPE,
    { parseAs: 'buffer' },
    (request: FastifyRequest, body: Buffer, done: (err: Error | null, body?: unknown) => void) => {
      try {
        done(null, parseJsonBody(request, body));
      } catch (e) {
        done(e as Error);
      }
    },
  );
}

function parseJsonBody(request: FastifyRequest, body: Buffer): unknown {
  const charset = CHARSET.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && !UTF8_CHARSETS.has(charset)) {
    throw new UnsupportedBodyError(`Unsupported charset "${charset.slice(0, 40)}": JSON bodies are UTF-8`);
  }
  const encoding = request.headers['content-encoding'];
  if (
    encoding &&
    encoding !== 'identity' &&
    !(request.routeOptions.config as LargeBodyRouteConfig).largeBody
  ) {
    throw new UnsupportedBodyError(
      'This route takes no Content-Encoding (gzip is accepted on the webhook routes only)',
    );
  }
  if (body.length === 0) throw new MalformedBodyError('Request body is empty but content-type is JSON');
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw new MalformedBodyError('Request body is not valid UTF-8');
  }
  const oversized = checkFieldCounts(text);
  if (oversized) return oversized;
  let parsed: unknown;
  try {
    parsed = secureJsonParse.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (e) {
    const forbidden = e instanceof Error && /forbidden prototype/i.test(e.message);
    throw new MalformedBodyError(
      forbidden
        ? 'Forbidden key (__proto__ or constructor.prototype) in request body'
        : 'Malformed JSON in request body',
    );
  }
  // Well-formed UTF-8 cannot carry a lone surrogate; only a \uD8xx-\uDFxx escape can, so most bodies skip the walk.
  if (SURROGATE_ESCAPE.test(text) && !isWellFormedDeep(parsed)) {
    throw new MalformedBodyError('Request body contains invalid Unicode (a lone UTF-16 surrogate)');
  }
  if ((request.routeOptions.config as LargeBodyRouteConfig).bulkFeed) {
    digests.set(request, hash('sha256', body, 'hex'));
  }
  return parsed;
}

function isWellFormedDeep(value: unknown): boolean {
  if (typeof value === 'string') return !LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.every(isWellFormedDeep);
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (LONE_SURROGATE.test(key) || !isWellFormedDeep(child)) return false;
    }
  }
  return true;
}
