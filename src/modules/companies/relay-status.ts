import type { Company } from './entities/company.entity';

export const RELAY_STATUSES = ['suspended', 'no_package', 'expired', 'quota_exceeded', 'active'] as const;
export type RelayStatus = (typeof RELAY_STATUSES)[number];

type RelayFacts = Pick<Company, 'status' | 'packageUuid' | 'periodEnd' | 'quota' | 'used'>;

/**
 * One rule of the derived relay state: when it holds, in TypeScript and as a SQL condition on
 * the companies table (`c` is the table's alias, `:now` the time of the request). Each rule's
 * two forms sit side by side so they are read, and changed, together.
 */
interface RelayRule {
  status: Exclude<RelayStatus, typeof OTHERWISE>;
  holds(company: RelayFacts, now: Date): boolean;
  sql(c: string): string;
}

/** The state when no rule holds. */
const OTHERWISE = 'active';

/** The relay state of resources.md: the first rule that holds, in this order. */
const RELAY_RULES: readonly RelayRule[] = [
  {
    status: 'suspended',
    holds: (company) => company.status === 'suspended',
    sql: (c) => `${c}.status = 'suspended'`,
  },
  {
    status: 'no_package',
    holds: (company) => !company.packageUuid || !company.periodEnd,
    sql: (c) => `${c}.package_uuid IS NULL OR ${c}.period_end IS NULL`,
  },
  {
    status: 'expired',
    holds: (company, now) => company.periodEnd !== null && company.periodEnd.getTime() <= now.getTime(),
    sql: (c) => `${c}.period_end <= :now`,
  },
  {
    status: 'quota_exceeded',
    holds: (company) => company.used >= company.quota,
    sql: (c) => `${c}.used >= ${c}.quota`,
  },
];

/** The derived relay state of a loaded company. */
export function deriveRelayStatus(company: RelayFacts, now: Date = new Date()): RelayStatus {
  return RELAY_RULES.find((rule) => rule.holds(company, now))?.status ?? OTHERWISE;
}

/**
 * The same state as a SQL expression over the companies table aliased `alias`, so a list can
 * filter, count and page by it in the database. Bind `now` (a Date) once per request.
 */
export function relayStatusSql(alias: string): string {
  const whens = RELAY_RULES.map((rule) => `  WHEN (${rule.sql(alias)}) THEN '${rule.status}'`);
  return `CASE\n${whens.join('\n')}\n  ELSE '${OTHERWISE}'\nEND`;
}
