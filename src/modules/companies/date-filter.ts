import { ValidateBy, ValidationOptions } from 'class-validator';

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
/** ISO 8601 timestamp with a time and an explicit zone (`Z` or `±hh:mm`). */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * The UTC day (`YYYY-MM-DD`) a `from`/`to` filter names: a date-only value as it is (when it
 * is a real calendar day), a full timestamp by the UTC day it falls on (README "Identifiers,
 * names, time"). Null when the value is neither.
 */
export function utcDayOf(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const date = DATE_ONLY.exec(value);
  if (date) {
    const d = new Date(`${value}T00:00:00.000Z`);
    return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value ? value : null;
  }
  if (!TIMESTAMP.test(value)) return null;
  const t = new Date(value);
  return Number.isNaN(t.getTime()) ? null : t.toISOString().slice(0, 10);
}

/** `YYYY-MM-DD` or an ISO 8601 timestamp with a zone. */
export const IsDateFilter = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'isDateFilter',
      validator: {
        validate: (value) => utcDayOf(value) !== null,
        defaultMessage: (args) => `${args?.property} must be a date (YYYY-MM-DD) or an ISO 8601 timestamp`,
      },
    },
    options,
  );
