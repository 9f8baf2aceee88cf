import type { DataSource } from 'typeorm';

/** How long a health check waits for a dependency's answer before it calls it down. */
export const HEALTH_CHECK_TIMEOUT_MS = 2000;

/** `check`'s answer, or false once `ms` have passed without one: a hung dependency is down. */
export async function answersWithin(
  check: () => Promise<boolean>,
  ms = HEALTH_CHECK_TIMEOUT_MS,
): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([check().catch(() => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether the database answers `SELECT 1` in time (the API's readiness and the relay agent's). */
export function databaseUp(dataSource: DataSource): Promise<boolean> {
  if (!dataSource.isInitialized) return Promise.resolve(false);
  return answersWithin(() => dataSource.query('SELECT 1').then(() => true));
}
