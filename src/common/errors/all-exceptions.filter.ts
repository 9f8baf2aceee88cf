import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  HttpStatus,
  Logger,
  NotFoundException,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { driverCode, isUniqueViolation } from '../../database/database-errors';
import { failure, FailureEnvelope } from '../http/envelope';
import { DomainError } from './domain-error';
import { ValidationFailedException } from './validation-failed.exception';

/** Driver error codes that mean "the database cannot be reached", not "this query is wrong". */
const DATABASE_UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006',
  '53300',
  'SQLITE_BUSY',
  'SQLITE_CANTOPEN',
]);

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  406: 'Not acceptable',
  409: 'Conflict',
  413: 'Payload too large',
  415: 'Unsupported media type',
  429: 'Too many requests',
  503: 'Service unavailable',
};

/**
 * The one place where anything thrown becomes the failure envelope. Known errors keep their
 * status and message; anything unknown is a 500 "Internal server error" and only the log
 * (which carries the request id) sees the cause.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Exceptions');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const envelope = this.toEnvelope(exception);
    if (exception instanceof DomainError && exception.headers) void reply.headers(exception.headers);
    void reply.status(envelope.code).header('content-type', 'application/json; charset=utf-8').send(envelope);
  }

  toEnvelope(exception: unknown): FailureEnvelope {
    if (exception instanceof ValidationFailedException) {
      return failure(
        HttpStatus.BAD_REQUEST,
        'Validation failed',
        exception.details,
        exception.omittedDetails,
      );
    }
    if (exception instanceof DomainError) return failure(exception.status, exception.message);
    if (exception instanceof HttpException) return this.fromHttpException(exception);
    if (isDatabaseUnavailable(exception)) {
      this.logger.error({ err: exception }, 'Database unavailable');
      return failure(HttpStatus.SERVICE_UNAVAILABLE, 'Service unavailable');
    }
    if (isUniqueViolation(exception)) {
      return failure(HttpStatus.CONFLICT, 'Resource already exists');
    }
    const fastifyStatus = clientErrorStatus(exception);
    if (fastifyStatus) return failure(fastifyStatus, clientErrorMessage(exception, fastifyStatus));

    this.logger.error({ err: exception }, 'Unhandled error');
    return failure(HttpStatus.INTERNAL_SERVER_ERROR, 'Internal server error');
  }

  private fromHttpException(exception: HttpException): FailureEnvelope {
    const status: number = exception.getStatus();
    // Nest's own not-found handler (no route matched) throws "Cannot GET /path".
    if (exception instanceof NotFoundException && /^Cannot [A-Z]+ /.test(exception.message)) {
      return failure(HttpStatus.NOT_FOUND, 'Route does not exist');
    }
    if (status >= 500) {
      if (status === 503) return failure(status, exception.message);
      this.logger.error({ err: exception }, 'Server error');
      return failure(status, 'Internal server error');
    }
    const body = exception.getResponse();
    let msg = exception.message;
    if (typeof body === 'object' && body !== null && 'message' in body) {
      const m = body.message;
      if (typeof m === 'string') msg = m;
      else if (Array.isArray(m)) msg = m.join('; ');
    }
    return failure(status, msg || STATUS_TEXT[status] || 'Request failed');
  }
}

/**
 * Messages of a database that cannot be reached or whose connection is closed: pg's pool and
 * client, TypeORM's drivers ("Driver not Connected", "Connection with … database is not
 * established") and better-sqlite3 ("The database connection is not open", a TypeError).
 */
const DATABASE_UNAVAILABLE_MESSAGE =
  /Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect|Connection is not established|Connection with \w+ database is not established|Driver not Connected|Cannot use a pool after calling end on the pool|Client was closed and is not queryable|The database connection is not open|database system is (shutting down|starting up)/i;

function isDatabaseUnavailable(error: unknown): boolean {
  const code = driverCode(error);
  if (code && DATABASE_UNAVAILABLE.has(code)) return true;
  // Not `instanceof Error`: a native driver's errors may come from another realm (Jest's VM).
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && DATABASE_UNAVAILABLE_MESSAGE.test(message);
}

/** Errors raised by Fastify itself (body parsing, limits, media types) carry a 4xx statusCode. */
function clientErrorStatus(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown })?.statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : undefined;
}

function clientErrorMessage(error: unknown, status: number): string {
  const code = (error as { code?: unknown }).code;
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'Request body is too large';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Unsupported content type';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'Request body is empty but content-type is application/json';
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return 'Content-Length does not match the body';
    default: {
      // Not `instanceof Error`: errors of Node's internals (zlib) may come from another realm (Jest's VM).
      const message = (error as { message?: unknown }).message;
      return typeof message === 'string' && message ? message : STATUS_TEXT[status] || 'Bad request';
    }
  }
}
