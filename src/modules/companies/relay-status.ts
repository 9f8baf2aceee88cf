import type { Company } from './entities/company.entity';

export const RELAY_STATUSES = ['suspended', 'no_package', 'expired', 'quota_exceeded', 'active'] as const;
export type RelayStatus = (typeof RELAY_STATUSES)[number];

type RelayFacts = Pick<Company, 'status' | 'packageUuid' | 'periodEnd' | 'quota' | 'used'>;

/** The derived relay state of resources.md: the first rule that holds, in this order. */
export function deriveRelayStatus(company: RelayFacts, now: Date = new Date()): RelayStatus {
  if (company.status === 'suspended') return 'suspended';
  if (!company.packageUuid || !company.periodEnd) return 'no_package';
  if (company.periodEnd.getTime() <= now.getTime()) return 'expired';
  if (company.used >= company.quota) return 'quota_exceeded';
  return 'active';
}
