import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ChangeEvents } from '../../common/events/change-events';
import { TransactionService } from '../../database/transaction.service';
import type { Company } from '../companies/entities/company.entity';
import { CrmOutboxEntry } from './entities/crm-outbox-entry.entity';

/**
 * Puts a new company in the CRM outbox inside its registration transaction: what the companies
 * area's sign-up calls. Whether the CRM is configured or not, the row is written (the
 * `crm-sync` job sends it once the CRM is connected).
 */
@Injectable()
export class CrmRegistrationQueue {
  /** In this process only: the sync runs in the process that registered the company. */
  private readonly queued = new ChangeEvents<number>();

  constructor(private readonly transactions: TransactionService) {}

  /** Writes the company's outbox row with `em`, so it commits or rolls back with the company. */
  async queueNewCompany(em: EntityManager, company: Pick<Company, 'id'>): Promise<void> {
    await em.insert(CrmOutboxEntry, { companyId: company.id, nextAttemptAt: new Date() });
    this.transactions.afterCommit(em, () => this.queued.emit(company.id));
  }

  /** Calls `listener` with the company's id once its registration has committed (CrmSyncService sends it then). */
  onQueued(listener: (companyId: number) => void): () => void {
    return this.queued.onChange(listener);
  }
}
