import { BadRequestException, PipeTransform } from '@nestjs/common';

/** Any UUID version, as ParseUUIDPipe's `version: undefined`. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The one UUID check of path parameters: the pipe below, and the ownership guards, which run
 * before pipes and must refuse a malformed id with the same 400 rather than a 403 or 404.
 */
export function requireUuid(value: unknown): string {
  if (typeof value !== 'string' || !UUID.test(value)) {
    throw new BadRequestException('Validation failed (uuid is expected)');
  }
  return value;
}

/** `@Param('uuid', uuidPipe)`: a malformed UUID is a 400 with the envelope. */
export const uuidPipe: PipeTransform<unknown, string> = { transform: requireUuid };
