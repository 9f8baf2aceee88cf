import { QueryFailedError } from 'typeorm';

/** PostgreSQL's unique_violation and SQLite's constraint codes for a duplicate key. */
const UNIQUE_VIOLATION = new Set(['23505', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY']);

/** The driver's error code of a failed query (pg's SQLSTATE, better-sqlite3's code). */
export function driverCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; driverError?: { code?: unknown } } | null;
  const code = e?.driverError?.code ?? e?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A query refused because it would duplicate a unique key. */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof QueryFailedError && UNIQUE_VIOLATION.has(driverCode(error) ?? '');
}
