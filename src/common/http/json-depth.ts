import { BadRequestException } from '@nestjs/common';

/** No request body nests objects and arrays deeper than this (quality.md "Bad input"). */
export const MAX_JSON_DEPTH = 32;

/**
 * Throws the 400 "Request body is nested too deeply" of every route for a parsed JSON value
 * nested more than MAX_JSON_DEPTH levels, before anything recurses into it (JSON.stringify of
 * 5,000 levels overflows the stack). Stops descending at the limit, so the cost is bounded by
 * the body's size, never by its depth.
 */
export function refuseDeepNesting(value: unknown): void {
  if (deeperThanLimit(value, 0)) throw new BadRequestException('Request body is nested too deeply');
}

function deeperThanLimit(value: unknown, depth: number): boolean {
  if (!value || typeof value !== 'object') return false;
  if (depth >= MAX_JSON_DEPTH) return true;
  for (const child of Array.isArray(value) ? value : Object.values(value)) {
    if (deeperThanLimit(child, depth + 1)) return true;
  }
  return false;
}
