import { BadRequestException } from '@nestjs/common';

export type SortDirection = 'ASC' | 'DESC';

/**
 * Parses `field:asc|desc` against the route's whitelist (field → column), so only known
 * columns ever reach a query. Unknown fields or directions are a 400.
 */
export function parseSort<F extends string>(
  sort: string | undefined,
  whitelist: Record<F, string>,
  fallback: [F, SortDirection],
): [string, SortDirection] {
  if (!sort) return [whitelist[fallback[0]], fallback[1]];
  const match = /^([A-Za-z]+):(asc|desc)$/i.exec(sort);
  if (!match || !Object.prototype.hasOwnProperty.call(whitelist, match[1])) {
    throw new BadRequestException(
      `sort must be one of ${Object.keys(whitelist)
        .map((f) => `${f}:asc|desc`)
        .join(', ')}`,
    );
  }
  return [whitelist[match[1] as F], match[2].toUpperCase() as SortDirection];
}
