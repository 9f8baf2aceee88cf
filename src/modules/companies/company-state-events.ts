import { Injectable } from '@nestjs/common';
import { ChangeEvents } from '../../common/events/change-events';
import { ChangeNotices } from '../../database/change-notices';

/** What changed in a company's state (resources.md Company: status, quota, period, usage). */
export type CompanyStateChangeKind =
  | 'suspended'
  | 'resumed'
  | 'suspension_reason'
  | 'quota'
  | 'period'
  | 'payment'
  | 'usage'
  /** The networks that may relay without SMTP authentication (announced by CompaniesService). */
  | 'allowed_ips';

export interface CompanyStateChange {
  companyId: number;
  companyUuid: string;
  kind: CompanyStateChangeKind;
}

/**
 * Committed changes to a company's state, raised by CompanyStateService (and CompaniesService
 * for allowed IPs) after the commit only: a rolled-back change announces nothing. What caches a
 * company's state (the relay decision) listens here to forget it, in this process and in the
 * others on the same database.
 */
@Injectable()
export class CompanyStateEvents extends ChangeEvents<CompanyStateChange> {
  constructor(notices: ChangeNotices) {
    super(notices, 'relay_company_state');
  }
}
