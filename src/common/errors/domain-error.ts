import { HttpStatus } from '@nestjs/common';

/**
 * A rule of the domain that refused an action. Services throw these; the exception filter
 * maps them to their status once (a subclass per kind keeps call sites readable).
 */
export class DomainError extends Error {
  constructor(
    readonly status: HttpStatus,
    message: string,
    /** Headers of the answer (a 429's `retry-after`). */
    readonly headers?: Readonly<Record<string, string>>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class ConflictError extends DomainError {
  constructor(message: string) {
    super(HttpStatus.CONFLICT, message);
  }
}

export class NotFoundError extends DomainError {
  constructor(message: string) {
    super(HttpStatus.NOT_FOUND, message);
  }
}

export class InvalidCredentialsError extends DomainError {
  constructor(message: string) {
    super(HttpStatus.UNAUTHORIZED, message);
  }
}

export class ForbiddenError extends DomainError {
  constructor(message: string) {
    super(HttpStatus.FORBIDDEN, message);
  }
}

export class BadRequestError extends DomainError {
  constructor(message: string) {
    super(HttpStatus.BAD_REQUEST, message);
  }
}

export class ServiceNotConfiguredError extends DomainError {
  constructor(what: string) {
    super(HttpStatus.SERVICE_UNAVAILABLE, `${what} is not configured`);
  }
}
