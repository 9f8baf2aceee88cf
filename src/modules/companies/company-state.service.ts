import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In } from 'typeorm';
import { BadRequestError, ConflictError, NotFoundError } from '../../common/errors/domain-error';
import { WebhookOutbox } from '../webhooks/webhook-outbox';
import { SqlDialect } from '../../database/sql-dialect';
import { TransactionService } from '../../database/transaction.service';
import { Notifier } from '../notifications/notifier';
import { CompanyStateChangeKind, CompanyStateEvents } from './company-state-events';
import { CompanyAuditEvent } from './entities/company-audit-event.entity';
import { CompanyUsageDay } from './entities/company-usage-day.entity';
import { Company, CompanyStatus } from './entities/company.entity';
import { announceSuspension, SuspensionNotice } from './suspension-notices';

const DAY_MS = 86_400_000;

/** What a paid billing brings to the subscription (a snapshot taken when the billing was made). */
export interface PaidPackage {
  packageUuid: string;
  quota: number;
  durationDays: number;
}

export type PeriodChange = 'started' | 'extended';

/** How a caller names the company it locks. */
export type CompanyKey = { id: number } | { uuid: string } | { relayUsername: string };

export interface StatusChange {
  status: CompanyStatus;
  /** The suspension's reason (ignored unless suspending). */
  reason: string | null;
  /** The admin who made the change; null for the system (the spam threshold). */
  adminUuid: string | null;
  /** Extra fields of the audit row's detail, beside from, to and reason. */
  detail?: Record<string, unknown>;
  /** Who hears of the suspension and in which words; required when suspending. */
  notice?: SuspensionNotice;
}

type CompanyRef = Pick<Company, 'id' | 'uuid'>;

/**
 * The one writer of a company's state (resources.md Company: status, quota, period, usage):
 * suspension and resumption with their audit row and announcement, quota overrides, period
 * extensions, payments, usage counters, and the company row lock the other areas take before
 * changing what depends on it. The methods taking an EntityManager join the caller's
 * transaction (from TransactionService.run); each change is announced on CompanyStateEvents
 * once that transaction commits, never if it rolls back.
 */
@Injectable()
export class CompanyStateService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: TransactionService,
    private readonly dialect: SqlDialect,
    private readonly notifications: Notifier,
    private readonly events: CompanyStateEvents,
    private readonly webhooks: WebhookOutbox,
  ) {}

  /** The company, locked for the rest of the caller's transaction (PostgreSQL); 404 when missing. */
  async lock(em: EntityManager, key: CompanyKey): Promise<Company> {
    const qb = em.getRepository(Company).createQueryBuilder('company');
    if ('id' in key) qb.where('company.id = :id', { id: key.id });
    else if ('uuid' in key) qb.where('company.uuid = :uuid', { uuid: key.uuid });
    else qb.where('company.relayUsername = :relayUsername', { relayUsername: key.relayUsername });
    const company = await this.dialect.forUpdate(qb).getOne();
    if (!company) throw new NotFoundError('Company not found');
    return company;
  }

  /** Locks the company row without reading it: serialises work on the company (billing creation). */
  async lockRow(em: EntityManager, companyId: number): Promise<void> {
    await this.dialect.lockRows(
      em
        .getRepository(Company)
        .createQueryBuilder('company')
        .select('company.id')
        .where('company.id = :id', { id: companyId }),
    );
  }

  /** One company_audit_events row, in the caller's transaction. */
  async audit(
    em: EntityManager,
    companyId: number,
    adminUuid: string | null,
    action: string,
    detail: Record<string, unknown> | null,
  ): Promise<void> {
    await em.save(em.create(CompanyAuditEvent, { companyId, adminUuid, action, detail }));
  }

  /**
   * Moves a locked company to `change.status` (nothing when it is there already): the row, one
   * `status.changed` audit row and, when suspending, the announcement to its users and the
   * admins (e-mails after the commit). Updates `company` in place.
   */
  async changeStatus(em: EntityManager, company: Company, change: StatusChange): Promise<void> {
    if (change.status === company.status) return;
    const suspendedReason = change.status === 'suspended' ? change.reason : null;
    await em.update(Company, { id: company.id }, { status: change.status, suspendedReason });
    await this.audit(em, company.id, change.adminUuid, 'status.changed', {
      from: company.status,
      to: change.status,
      reason: suspendedReason,
      ...change.detail,
    });
    company.status = change.status;
    company.suspendedReason = suspendedReason;
    this.changed(em, company, change.status === 'suspended' ? 'suspended' : 'resumed');
    await this.webhooks.emit(em, [
      {
        companyId: company.id,
        type: change.status === 'suspended' ? 'company.suspended' : 'company.reactivated',
        data: { status: change.status, reason: suspendedReason },
      },
    ]);
    if (change.status !== 'suspended') return;
    if (!change.notice) throw new Error('changeStatus: a suspension needs its notice');
    await announceSuspension(this.notifications, em, company, change.notice);
  }

  /** A new reason for a company that stays suspended (nothing when it is the same). */
  async changeSuspendedReason(
    em: EntityManager,
    company: Company,
    reason: string | null,
    adminUuid: string,
  ): Promise<void> {
    if (reason === company.suspendedReason) return;
    await em.update(Company, { id: company.id }, { suspendedReason: reason });
    await this.audit(em, company.id, adminUuid, 'suspension.reason_changed', {
      from: company.suspendedReason,
      to: reason,
    });
    company.suspendedReason = reason;
    this.changed(em, company, 'suspension_reason');
  }

  /**
   * Overrides the quota of the current period of a locked company (nothing when unchanged). A
   * warning already sent stays sent only while usage is still past its threshold under the new quota.
   */
  async overrideQuota(em: EntityManager, company: Company, quota: number, adminUuid: string): Promise<void> {
    if (quota === company.quota) return;
    const warnedAt80 = company.used * 100 >= quota * 80 ? company.quotaWarnedAt80 : null;
    const warnedAt100 = company.used >= quota ? company.quotaWarnedAt100 : null;
    await em.update(
      Company,
      { id: company.id },
      { quota, quotaWarnedAt80: warnedAt80, quotaWarnedAt100: warnedAt100 },
    );
    await this.audit(em, company.id, adminUuid, 'quota.overridden', {
      from: company.quota,
      to: quota,
      used: company.used,
    });
    company.quota = quota;
    company.quotaWarnedAt80 = warnedAt80;
    company.quotaWarnedAt100 = warnedAt100;
    this.changed(em, company, 'quota');
  }

  /** Moves the end of a locked company's running period later (never earlier, never into the past). */
  async extendPeriod(
    em: EntityManager,
    company: Company,
    periodEnd: Date,
    adminUuid: string,
    now: Date = new Date(),
  ): Promise<void> {
    if (!company.packageUuid || !company.periodEnd) {
      throw new ConflictError('The company has no package: assign one before extending its period');
    }
    if (periodEnd.getTime() <= now.getTime()) throw new BadRequestError('periodEnd must be in the future');
    if (periodEnd.getTime() <= company.periodEnd.getTime()) {
      throw new BadRequestError('periodEnd must be later than the current end of the period');
    }
    await em.update(Company, { id: company.id }, { periodEnd });
    await this.audit(em, company.id, adminUuid, 'period.extended', {
      from: company.periodEnd.toISOString(),
      to: periodEnd.toISOString(),
    });
    company.periodEnd = periodEnd;
    this.changed(em, company, 'period');
  }

  /**
   * Applies a paid billing (or an admin's package assignment) inside the caller's transaction,
   * with the company row locked here: paying the package whose period is still running extends
   * `periodEnd` by its duration and leaves `used` alone; anything else starts a new period now
   * with the package's quota and `used` = 0. Returns the company as it is now.
   */
  async applyPayment(
    em: EntityManager,
    companyId: number,
    paid: PaidPackage,
    paidAt: Date,
  ): Promise<{ period: PeriodChange; company: Company }> {
    const company = await this.lock(em, { id: companyId });
    const running =
      company.packageUuid === paid.packageUuid && company.periodEnd !== null && company.periodEnd > paidAt;
    const durationMs = paid.durationDays * DAY_MS;
    let period: PeriodChange;
    if (running) {
      company.periodEnd = new Date(company.periodEnd!.getTime() + durationMs);
      await em.update(Company, { id: companyId }, { periodEnd: company.periodEnd });
      period = 'extended';
    } else {
      Object.assign(company, {
        packageUuid: paid.packageUuid,
        quota: paid.quota,
        used: 0,
        periodStart: paidAt,
        periodEnd: new Date(paidAt.getTime() + durationMs),
        quotaWarnedAt80: null,
        quotaWarnedAt100: null,
      });
      await em.update(
        Company,
        { id: companyId },
        {
          packageUuid: company.packageUuid,
          quota: company.quota,
          used: company.used,
          periodStart: company.periodStart,
          periodEnd: company.periodEnd,
          quotaWarnedAt80: null,
          quotaWarnedAt100: null,
        },
      );
      period = 'started';
    }
    this.changed(em, company, 'payment');
    return { period, company };
  }

  /**
   * Counts `count` messages against the company's quota: an atomic `used = used + n` (never
   * read-modify-write) and the day's counter; then the 80 % and 100 % notifications, each at
   * most once per period (claimed with a conditional update, so concurrent callers cannot
   * both send it). Deduplication of (queue id, recipient) is the caller's job.
   */
  async recordUsage(
    companyId: number,
    count: number,
    at: Date = new Date(),
    /** The caller's transaction: the count commits with the work it counts; notifications follow the commit. */
    em?: EntityManager,
  ): Promise<void> {
    await this.recordUsages([{ companyId, count, at }], em);
  }

  /**
   * Adds messages to several companies' `used` and usage days at once: one statement for the
   * companies, one for their days and one read of what the thresholds need, however many
   * companies a log batch names (each statement holds rows other batches wait for).
   */
  async recordUsages(
    usage: ReadonlyArray<{ companyId: number; count: number; at: Date }>,
    em?: EntityManager,
  ): Promise<void> {
    const counted = usage
      .filter((u) => u.count > 0)
      .map((u) => ({ ...u, count: Math.floor(u.count) }))
      .sort((a, b) => a.companyId - b.companyId);
    if (!counted.length) return;
    const manager = em ?? this.dataSource.manager;
    const now = new Date();
    const byCompany = new Map<number, number>();
    const byDay = new Map<string, { companyId: number; day: string; count: number }>();
    for (const u of counted) {
      byCompany.set(u.companyId, (byCompany.get(u.companyId) ?? 0) + u.count);
      const day = u.at.toISOString().slice(0, 10);
      const key = `${u.companyId}\n${day}`;
      const cell = byDay.get(key) ?? { companyId: u.companyId, day, count: 0 };
      cell.count += u.count;
      byDay.set(key, cell);
    }
    await this.dialect.updateEach(
      manager,
      Company,
      [...byCompany].map(([id, n]) => ({ match: { id }, set: { updatedAt: now }, add: { used: n } })),
      'id',
    );
    await this.dialect.addToCounters(
      manager,
      CompanyUsageDay,
      [...byDay.values()].map(({ companyId, day, count }) => ({ key: { companyId, day }, add: { count } })),
    );
    const companies = await manager.getRepository(Company).find({
      where: { id: In([...byCompany.keys()]) },
      select: {
        id: true,
        uuid: true,
        quota: true,
        used: true,
        quotaWarnedAt80: true,
        quotaWarnedAt100: true,
      },
    });
    for (const company of companies) {
      this.changed(em, company, 'usage');
      if (em) this.transactions.afterCommit(em, () => this.warnOnThresholds(company));
      else await this.warnOnThresholds(company);
    }
  }

  /** Announces the change once the transaction of `em` commits (at once without one). */
  private changed(em: EntityManager | undefined, company: CompanyRef, kind: CompanyStateChangeKind): void {
    const change = { companyId: company.id, companyUuid: company.uuid, kind };
    this.transactions.afterCommit(em, () => this.events.emit(change));
  }

  private async warnOnThresholds(company: Company): Promise<void> {
    if (company.quota <= 0) return;
    const thresholds = [
      { percent: 80, column: 'quota_warned_at80', warned: company.quotaWarnedAt80 },
      { percent: 100, column: 'quota_warned_at100', warned: company.quotaWarnedAt100 },
    ] as const;
    for (const t of thresholds) {
      if (t.warned || company.used * 100 < company.quota * t.percent) continue;
      // Claimed once (the flag), announced with it: the notification and the webhook event.
      await this.transactions.run(async (em) => {
        const claimed = await em
          .createQueryBuilder()
          .update(Company)
          .set({ [t.percent === 80 ? 'quotaWarnedAt80' : 'quotaWarnedAt100']: new Date() })
          .where(`id = :id AND ${t.column} IS NULL`, { id: company.id })
          .execute();
        if ((claimed.affected ?? 0) !== 1) return;
        await this.notifications.notifyCompanyUsers(
          company.id,
          {
            type: t.percent === 80 ? 'quota.80' : 'quota.100',
            title: t.percent === 80 ? 'You have used 80% of your quota' : 'Your quota is used up',
            body:
              t.percent === 80
                ? `Your company has sent ${company.used} of ${company.quota} messages this period.`
                : `Your company has sent ${company.used} of ${company.quota} messages this period. The relay refuses new mail until the period renews or you buy more.`,
            data: { used: company.used, quota: company.quota },
            email: true,
            link: '/billing',
          },
          em,
        );
        await this.webhooks.emit(em, [
          {
            companyId: company.id,
            type: t.percent === 80 ? 'quota.warning' : 'quota.exhausted',
            data: { quota: company.quota, used: company.used, percent: t.percent },
          },
        ]);
      });
    }
  }
}
