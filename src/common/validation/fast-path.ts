import type { Type } from '@nestjs/common';

/**
 * A hand-written check of a hot route's body: true only when the body is one the full
 * validation would accept unchanged (no unknown field, strings already trimmed and without NUL,
 * every decorator satisfied). Anything else, false: the full validation then runs and says what
 * is wrong. So the check may be stricter than the DTO, never looser; a property test holds each
 * one to that (see its spec).
 */
export type FastBodyCheck = (body: Record<string, unknown>) => boolean;

const checks = new WeakMap<Type<unknown>, FastBodyCheck>();

/**
 * Lets AppValidationPipe accept a body that passes `check` as it is, skipping class-transformer
 * and class-validator (~100 µs a request on the relay's path). For routes called for every
 * message, where that cost matters; the DTO stays the contract and the OpenAPI schema.
 */
export function FastBodyPath(check: FastBodyCheck): ClassDecorator {
  return (target) => {
    checks.set(target as unknown as Type<unknown>, check);
  };
}

export function fastBodyCheckOf(dto: Type<unknown>): FastBodyCheck | undefined {
  return checks.get(dto);
}

/** A string the full validation keeps as it is (trimmed, no NUL byte) of at most `max` UTF-16 units. */
export function isPlainString(value: unknown, max: number): value is string {
  return (
    typeof value === 'string' && value.length <= max && value.trim() === value && !value.includes('\u0000')
  );
}
