import { ValidateBy, ValidationOptions } from 'class-validator';
import { BadRequestError } from '../errors/domain-error';

/**
 * Date-only filters `from` / `to` (README "Identifiers, names, time, money"): a `YYYY-MM-DD`
 * day (inclusive, UTC) or a full ISO 8601 timestamp. The one copy of that rule: the
 * validator, the UTC day a value names, and the `[from, to]` window it covers.
 */

export const DAY_MS = 86_400_000;

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
/** A date, a time (seconds and 1 to 9 fraction digits optional) and an explicit zone (`Z` or `±hh:mm`). */
const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/;

function isCalendarDay(year: string, month: string, day: string): boolean {
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  return (
    date.getUTCFullYear() === Number(year) &&
    date.getUTCMonth() === Number(month) - 1 &&
    date.getUTCDate() === Number(day)
  );
}

/**
 * The instant a filter value starts at, and whether it is a whole day; null when it is neither
 * a real calendar day nor a real timestamp (`2026-02-30`, `24:00`, an offset of `+24:00` and a
 * timestamp without a zone are all refused: `Date` would quietly roll or localise them).
 */
function parseDateFilter(value: unknown): { start: Date; dateOnly: boolean } | null {
  if (typeof value !== 'string') return null;
  const day = DATE_ONLY.exec(value);
  if (day) {
    return isCalendarDay(day[1], day[2], day[3])
      ? { start: new Date(`${value}T00:00:00.000Z`), dateOnly: true }
      : null;
  }
  const ts = TIMESTAMP.exec(value);
  if (!ts) return null;
  const [, year, month, date, hour, minute, second = '00', offsetHour = '00', offsetMinute = '00'] = ts;
  if (!isCalendarDay(year, month, date)) return null;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return null;
  if (Number(offsetHour) > 23 || Number(offsetMinute) > 59) return null;
  const start = new Date(value);
  return Number.isNaN(start.getTime()) ? null : { start, dateOnly: false };
}

/**
 * The UTC day (`YYYY-MM-DD`) a `from`/`to` filter names: a date-only value as it is, a full
 * timestamp by the UTC day it falls on. Null when the value is neither.
 */
export function utcDayOf(value: unknown): string | null {
  const parsed = parseDateFilter(value);
  if (!parsed) return null;
  return parsed.dateOnly ? (value as string) : parsed.start.toISOString().slice(0, 10);
}

/** `YYYY-MM-DD` (a real calendar day) or an ISO 8601 timestamp with a zone; one message for anything else. */
export const IsDateFilter = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'isDateFilter',
      validator: {
        validate: (value) => parseDateFilter(value) !== null,
        defaultMessage: (args) => `${args?.property} must be a date (YYYY-MM-DD) or an ISO 8601 timestamp`,
      },
    },
    options,
  );

/** `[from, toExclusive)`: a date-only `to` covers its whole day (inclusive, UTC). */
export interface DateWindow {
  from?: Date;
  toExclusive?: Date;
}

/**
 * The window of two filter values already validated by @IsDateFilter; 400 when `from` is
 * after `to`.
 */
export function toDateWindow(from?: string, to?: string): DateWindow {
  const window: DateWindow = {};
  const start = from ? parseDateFilter(from) : null;
  const end = to ? parseDateFilter(to) : null;
  if (start) window.from = start.start;
  if (end) {
    window.toExclusive = new Date(end.start.getTime() + (end.dateOnly ? DAY_MS : 1));
  }
  if (window.from && window.toExclusive && window.from >= window.toExclusive) {
    throw new BadRequestError('from must not be after to');
  }
  return window;
}

/** A report's window (both ends given), at most `maxDays` long; 400 otherwise. */
export function reportWindow(from: string, to: string, maxDays = 366): { from: Date; toExclusive: Date } {
  const window = toDateWindow(from, to);
  if (!window.from || !window.toExclusive) throw new BadRequestError('from and to are required');
  if (window.toExclusive.getTime() - window.from.getTime() > maxDays * DAY_MS) {
    throw new BadRequestError(`The window from..to must not exceed ${maxDays} days`);
  }
  return { from: window.from, toExclusive: window.toExclusive };
}
