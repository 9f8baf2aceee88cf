import { Injectable, Logger } from '@nestjs/common';

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

export type CompanyStateListener = (change: CompanyStateChange) => void;

/**
 * In-process announcements of committed changes to a company's state, raised by
 * CompanyStateService (and CompaniesService for allowed IPs) after the commit only (a rolled-back change announces nothing). What
 * caches a company's state (the relay decision) listens here to forget it.
 */
@Injectable()
export class CompanyStateEvents {
  private readonly logger = new Logger(CompanyStateEvents.name);
  private readonly listeners = new Set<CompanyStateListener>();

  /** Calls `listener` for every change from now on; the returned function stops it. */
  onChange(listener: CompanyStateListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** For CompanyStateService: a listener that throws is logged and does not stop the others. */
  emit(change: CompanyStateChange): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch (e: unknown) {
        this.logger.error({ err: e, change }, 'Company state listener failed');
      }
    }
  }
}
