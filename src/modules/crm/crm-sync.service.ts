import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, IsNull, LessThanOrEqual, Repository } from 'typeorm';
import { ConflictError, DomainError, ServiceNotConfiguredError } from '../../common/errors/domain-error';
import { SqlDialect } from '../../database/sql-dialect';
import { TransactionService } from '../../database/transaction.service';
import { CompaniesService } from '../companies/companies.service';
import type { Company } from '../companies/entities/company.entity';
import { Job } from '../jobs/job.decorator';
import { CompanyMembersService } from '../users/company-members.service';
import type { User } from '../users/entities/user.entity';
import {
  CrmClient,
  CrmModule,
  CrmUnavailableError,
  CrmUpsertOutcome,
  CrmTokenRefusedError,
} from './crm.client';
import { CrmConnectionService, CrmSession } from './crm-connection.service';
import { CrmRegistrationQueue } from './crm-registration-queue';
import { CrmOutboxEntry } from './entities/crm-outbox-entry.entity';

/** integrations.md: at most 100 records per upsert call. */
const BATCH = 100;
const FIRST_RETRY_MS = 60_000;
const LONGEST_RETRY_MS = 6 * 3_600_000;
const MAX_ERROR = 500;
/** The Account field that identifies a company (a unique custom field in the CRM), so a retried upsert never duplicates. */
export const ACCOUNT_KEY_FIELD = 'Relay_Company_UUID';

/**
 * Companies and their owner contacts upserted into the CRM through the `crm_outbox` table: a
 * row is written in the registration transaction, sent after the commit, and retried with
 * backoff (1 min, doubling, at most 6 h) by the `crm-sync` job while the CRM fails. Runs are
 * one at a time: in this process by a queue, across replicas by a named lock.
 */
@Injectable()
export class CrmSyncService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(CrmSyncService.name);
  private tail: Promise<unknown> = Promise.resolve();
  private pendingRunQueued = false;

  constructor(
    @InjectRepository(CrmOutboxEntry) private readonly outbox: Repository<CrmOutboxEntry>,
    private readonly connection: CrmConnectionService,
    private readonly client: CrmClient,
    private readonly companies: CompaniesService,
    private readonly members: CompanyMembersService,
    private readonly registrationQueue: CrmRegistrationQueue,
    private readonly transactions: TransactionService,
    private readonly dialect: SqlDialect,
  ) {}

  /** A company queued at sign-up is sent as soon as its registration commits. */
  onModuleInit(): void {
    this.registrationQueue.onQueued(() => this.syncSoon());
  }

  /** The `crm-sync` job: what is due in the outbox, then the expired OAuth states; how many changed. */
  @Job('crm-sync')
  async runJob(): Promise<number> {
    return (await this.syncPending()) + (await this.connection.purgeExpiredStates());
  }

  /** Lets a run in progress finish before the database closes. */
  async onApplicationShutdown(): Promise<void> {
    await this.tail.catch(() => undefined);
  }

  /**
   * Starts a run of what is due, in the background (after a registration commits): detached, so
   * the registration does not wait for the CRM, and shutdown (and a test) can wait for it.
   */
  syncSoon(): void {
    if (!this.client.isConfigured) return;
    this.transactions.detach(() =>
      this.syncPending().then(
        () => undefined,
        (err: unknown) => this.logger.warn({ err }, 'CRM sync failed'),
      ),
    );
  }

  /** Sends every due outbox row, 100 at a time; how many companies reached the CRM. Nothing while the CRM is not connected. */
  syncPending(): Promise<number> {
    if (!this.client.isConfigured) return Promise.resolve(0);
    // A run already waiting for its turn will see the rows this caller wants sent.
    if (this.pendingRunQueued) return Promise.resolve(0);
    this.pendingRunQueued = true;
    return this.exclusive(
      async () => {
        if (!(await this.connection.isConnected())) return 0;
        let synced = 0;
        for (;;) {
          const due = await this.outbox.find({
            where: { syncedAt: IsNull(), nextAttemptAt: LessThanOrEqual(new Date()) },
            order: { nextAttemptAt: 'ASC', id: 'ASC' },
            take: BATCH,
          });
          if (!due.length) return synced;
          const outcome = await this.send(due);
          synced += outcome.synced;
          if (outcome.failed) return synced;
        }
      },
      () => 0,
      () => (this.pendingRunQueued = false),
    );
  }

  /**
   * The admin's `crm-sync`: upserts the company now, whatever its outbox row says, and answers
   * its CRM Account id. 503 when the CRM is not configured, not connected or fails.
   */
  async syncCompany(companyUuid: string): Promise<{ crmAccountId: string }> {
    const companyId = await this.companies.idOf(companyUuid);
    if (!this.client.isConfigured) throw new ServiceNotConfiguredError('CRM');
    await this.connection.session();
    return this.exclusive(
      async () => {
        await this.dialect.insertIgnoringDuplicates(this.outbox.manager, CrmOutboxEntry, [
          { companyId, nextAttemptAt: new Date() },
        ]);
        await this.outbox.update({ companyId }, { syncedAt: null, attempts: 0, nextAttemptAt: new Date() });
        const entry = await this.outbox.findOneByOrFail({ companyId });
        const outcome = await this.send([entry]);
        if (outcome.error) throw outcome.error;
        const crmAccountId = outcome.accountIds.get(companyId);
        const refused = outcome.errors.get(companyId);
        if (refused || !crmAccountId) {
          throw new CrmUnavailableError(`The CRM did not take the company: ${refused ?? 'unknown error'}`);
        }
        return { crmAccountId };
      },
      () => {
        throw new ConflictError('A CRM sync is running on another replica: try again in a moment');
      },
    );
  }

  /** Runs `work` after the runs before it in this process, holding the lock across replicas. */
  private exclusive<T>(work: () => Promise<T>, busy: () => T, onTurn?: () => void): Promise<T> {
    const run = this.tail.then(async () => {
      onTurn?.();
      const outcome = await this.dialect.withNamedLock('crm-outbox', work);
      return outcome.acquired ? outcome.result : busy();
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  /**
   * One upsert of the entries' Accounts, then of their owners' Contacts, and each entry marked
   * synced or failed (with backoff). A failure of the whole call fails every entry; one record the
   * CRM refuses fails only its own.
   */
  private async send(entries: CrmOutboxEntry[]): Promise<SendOutcome> {
    const ids = entries.map((e) => e.companyId);
    const companies = new Map((await this.companies.byIds(ids)).map((c) => [c.id, c]));
    const owners = await this.members.firstOwners(ids);
    const live = entries.filter((e) => companies.has(e.companyId));

    const errors = new Map<number, string>();
    const accountIds = new Map<number, string>();
    try {
      const accounts = await this.upsert(
        'Accounts',
        live.map((e) => accountRecord(companies.get(e.companyId)!)),
        [ACCOUNT_KEY_FIELD],
      );
      live.forEach((entry, i) => {
        const outcome = accounts[i];
        if (outcome.ok) accountIds.set(entry.companyId, outcome.id);
        else errors.set(entry.companyId, `Account: ${outcome.error}`);
      });
      for (const [companyId, accountId] of accountIds)
        await this.companies.setCrmAccountId(companyId, accountId);

      const withContact = live.filter((e) => accountIds.has(e.companyId) && owners.has(e.companyId));
      if (withContact.length) {
        const contacts = await this.upsert(
          'Contacts',
          withContact.map((e) => contactRecord(owners.get(e.companyId)!, accountIds.get(e.companyId)!)),
          ['Email'],
        );
        withContact.forEach((entry, i) => {
          const outcome = contacts[i];
          if (!outcome.ok) errors.set(entry.companyId, `Contact: ${outcome.error}`);
        });
      }
    } catch (err: unknown) {
      if (!(err instanceof DomainError)) throw err;
      for (const entry of live) if (!errors.has(entry.companyId)) errors.set(entry.companyId, err.message);
      await this.markFailed(live, errors);
      this.logger.warn(
        { companies: live.length, reason: err.message },
        'CRM sync failed; retried with backoff',
      );
      return { synced: 0, failed: true, error: err, accountIds, errors };
    }

    const synced = live.filter((e) => !errors.has(e.companyId));
    await this.markSynced(synced);
    await this.markFailed(
      live.filter((e) => errors.has(e.companyId)),
      errors,
    );
    // A company deleted since it was queued has nothing left to send.
    const gone = entries.filter((e) => !companies.has(e.companyId)).map((e) => e.id);
    if (gone.length) await this.outbox.delete({ id: In(gone) });
    return { synced: synced.length, failed: false, accountIds, errors };
  }

  /** An upsert with a usable token; a refused token is refreshed and the call made once more. */
  private async upsert(
    module: CrmModule,
    records: Array<Record<string, unknown>>,
    duplicateCheckFields: string[],
  ): Promise<CrmUpsertOutcome[]> {
    const call = (s: CrmSession) =>
      this.client.upsert(s.apiDomain, s.accessToken, module, records, duplicateCheckFields);
    try {
      return await call(await this.connection.session());
    } catch (err: unknown) {
      if (!(err instanceof CrmTokenRefusedError)) throw err;
      return call(await this.connection.sessionAfterRefusal());
    }
  }

  private async markSynced(entries: CrmOutboxEntry[]): Promise<void> {
    if (!entries.length) return;
    await this.outbox.update({ id: In(entries.map((e) => e.id)) }, { syncedAt: new Date(), lastError: null });
  }

  private async markFailed(entries: CrmOutboxEntry[], errors: Map<number, string>): Promise<void> {
    const now = Date.now();
    for (const entry of entries) {
      const attempts = entry.attempts + 1;
      const delay = Math.min(FIRST_RETRY_MS * 2 ** (attempts - 1), LONGEST_RETRY_MS);
      await this.outbox.update(
        { id: entry.id },
        {
          attempts,
          nextAttemptAt: new Date(now + delay),
          lastError: (errors.get(entry.companyId) ?? 'CRM sync failed').slice(0, MAX_ERROR),
        },
      );
    }
  }
}

/** What one send did: per company, the Account id the CRM gave and why it failed. */
interface SendOutcome {
  synced: number;
  /** The call as a whole failed (`error`): the rest of a run waits for the next one. */
  failed: boolean;
  error?: DomainError;
  accountIds: Map<number, string>;
  errors: Map<number, string>;
}

/** A company as a CRM Account, keyed by its uuid. */
export function accountRecord(company: Company): Record<string, unknown> {
  return {
    [ACCOUNT_KEY_FIELD]: company.uuid,
    Account_Name: company.name,
    Phone: company.phone,
    Website: company.website,
    Billing_Street: company.address,
    Billing_City: company.city,
    Billing_Country: company.country,
    Relay_Username: company.relayUsername,
  };
}

/** The company's owner as a CRM Contact of its Account, keyed by e-mail address. */
export function contactRecord(owner: User, accountId: string): Record<string, unknown> {
  const name = owner.contact.fullName.trim();
  const space = name.lastIndexOf(' ');
  return {
    First_Name: space > 0 ? name.slice(0, space) : null,
    Last_Name: space > 0 ? name.slice(space + 1) : name,
    Email: owner.email,
    Phone: owner.contact.phone,
    Account_Name: { id: accountId },
  };
}
