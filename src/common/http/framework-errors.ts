import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { failure } from './envelope';
import { securityHeaders } from './security-headers';

/**
 * Errors that Fastify and Node raise before any route runs (README.md "Bodies"): they too are
 * envelopes with `x-request-id` and the security headers. Fastify's `frameworkErrors` covers
 * what its router refuses (a bad %-escape, a path parameter over 100 characters); Node's
 * `clientError` (headers too large, a request that is not HTTP) is answered on the raw socket.
 */
const HEADERS = securityHeaders();

const FRAMEWORK_ERRORS: Record<string, [number, string]> = {
  FST_ERR_BAD_URL: [400, 'Malformed URL: a bad %-escape in the path'],
  FST_ERR_MAX_PARAM_LENGTH: [414, 'A path parameter is too long (at most 100 characters)'],
};

export function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const [status, msg] = FRAMEWORK_ERRORS[error.code] ?? [400, 'Bad request'];
  void reply
    .code(status)
    .headers(HEADERS)
    .header('x-request-id', request.id)
    .header('content-type', 'application/json; charset=utf-8')
    .send(JSON.stringify(failure(status, msg)));
}

const CLIENT_ERRORS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request headers are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request timed out'],
};

export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, msg] = CLIENT_ERRORS[error.code ?? ''] ?? [400, 'Malformed HTTP request'];
  const body = JSON.stringify(failure(status, msg));
  const headers: Record<string, string | number> = {
    ...HEADERS,
    'x-request-id': randomUUID(),
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  };
  if (socket.writable) {
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${lines.join('')}\r\n${body}`);
  }
  socket.destroy(error);
}
