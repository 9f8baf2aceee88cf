/**
 * Column types that differ between the two supported databases. Entities are decorated when
 * their file is imported, so the choice is read from DATABASE_URL at that moment: the same
 * variable that selects the driver (see data-source-options.ts), so the two always agree.
 */
const usesPostgres = (): boolean => Boolean(process.env.DATABASE_URL);

export const DATETIME = usesPostgres() ? 'timestamptz' : 'datetime';
