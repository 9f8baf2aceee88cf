import { applyDecorators } from '@nestjs/common';
import { IsISO8601, Matches } from 'class-validator';
import { BadRequestError } from '../../../common/errors/domain-error';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_OR_TIMESTAMP = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** README "time": `YYYY-MM-DD` (a whole UTC day) or a full ISO 8601 timestamp with its offset. */
export const IsDateFilter = () =>
  applyDecorators(
    Matches(DATE_OR_TIMESTAMP, {
      message: '$property must be a date (YYYY-MM-DD) or an ISO 8601 timestamp',
    }),
    IsISO8601({ strict: true }, { message: '$property is not a valid date' }),
  );

export const DAY_MS = 86_400_000;

/** `[from, toExclusive)`: a date-only `to` covers its whole day (inclusive, UTC). */
export interface DateWindow {
  from?: Date;
  toExclusive?: Date;
}

export function toDateWindow(from?: string, to?: string): DateWindow {
  const window: DateWindow = {};
  if (from) window.from = new Date(DATE_ONLY.test(from) ? `${from}T00:00:00.000Z` : from);
  if (to) {
    window.toExclusive = DATE_ONLY.test(to)
      ? new Date(Date.parse(`${to}T00:00:00.000Z`) + DAY_MS)
      : new Date(Date.parse(to) + 1);
  }
  if (window.from && window.toExclusive && window.from >= window.toExclusive) {
    throw new BadRequestError('from must not be after to');
  }
  return window;
}
