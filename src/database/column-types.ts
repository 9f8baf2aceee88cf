/**
 * Column types that differ between the two supported databases. Entities are decorated when
 * their file is imported, so the choice is read from DATABASE_URL at that moment: the same
 * variable that selects the driver (see data-source-options.ts), so the two always agree.
 */
const usesPostgres = (): boolean => Boolean(process.env.DATABASE_URL);

/** The database the entities' column types were chosen for (buildDataSourceOptions refuses another). */
export const COLUMN_TYPES_FOR: 'postgres' | 'sqlite' = usesPostgres() ? 'postgres' : 'sqlite';
export const DATETIME = COLUMN_TYPES_FOR === 'postgres' ? 'timestamptz' : 'datetime';
export const BINARY = COLUMN_TYPES_FOR === 'postgres' ? 'bytea' : 'blob';

/** bigint comes back from pg as a string; amounts of money are safe integers, so read them as numbers. */
export const bigintAsNumber = {
  to: (value: number | null | undefined) => value,
  from: (value: string | number | null) => (value === null || value === undefined ? null : Number(value)),
};
