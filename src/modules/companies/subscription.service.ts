import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { NotificationsService } from '../notifications/notifications.service';
import { Company } from './entities/company.entity';

const DAY_MS = 86_400_000;

/** What a paid billing brings to the subscription (a snapshot taken when the billing was made). */
export interface PaidPackage {
  packageUuid: string;
  quota: number;
  durationDays: number;
}

export type PeriodChange = 'started' | 'extended';

/** The subscription and quota rules of resources.md ("Subscription and quota"). */
@Injectable()
export class SubscriptionService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly notifications: NotificationsService,
  ) {}

  /**
   * Applies a paid billing inside the caller's transaction (the company row should be locked
   * by the caller): paying the package whose period is still running extends `periodEnd` by
   * its duration and leaves `used` alone; anything else starts a new period now with `used` = 0.
   */
  async applyPayment(
    em: EntityManager,
    companyId: number,
    paid: PaidPackage,
    paidAt: Date,
  ): Promise<PeriodChange> {
    const company = await em.findOneOrFail(Company, { where: { id: companyId } });
    const running =
      company.packageUuid === paid.packageUuid && company.periodEnd !== null && company.periodEnd > paidAt;
    const durationMs = paid.durationDays * DAY_MS;
    if (running) {
      await em.update(
        Company,
        { id: companyId },
        { periodEnd: new Date(company.periodEnd!.getTime() + durationMs) },
      );
      return 'extended';
    }
    await em.update(
      Company,
      { id: companyId },
      {
        packageUuid: paid.packageUuid,
        quota: paid.quota,
        used: 0,
        periodStart: paidAt,
        periodEnd: new Date(paidAt.getTime() + durationMs),
        quotaWarnedAt80: null,
        quotaWarnedAt100: null,
      },
    );
    return 'started';
  }

  /**
   * Counts `count` messages against the company's quota: an atomic `used = used + n` (never
   * read-modify-write) and the day's counter; then the 80 % and 100 % notifications, each at
   * most once per period (claimed with a conditional update, so concurrent callers cannot
   * both send it). Deduplication of (queue id, recipient) is the caller's job.
   */
  async recordUsage(companyId: number, count: number, at: Date = new Date()): Promise<void> {
    if (count <= 0) return;
    await this.dataSource
      .createQueryBuilder()
      .update(Company)
      .set({ used: () => 'used + :count' })
      .where('id = :id', { id: companyId, count: Math.floor(count) })
      .execute();
    // An upsert that adds, in the one dialect both databases speak (SQLite ≥ 3.24 and PostgreSQL).
    const postgres = this.dataSource.options.type === 'postgres';
    const [a, b, c] = postgres ? ['$1', '$2', '$3'] : ['?', '?', '?'];
    await this.dataSource.query(
      `INSERT INTO company_usage_days (company_id, day, count) VALUES (${a}, ${b}, ${c})
       ON CONFLICT (company_id, day) DO UPDATE SET count = company_usage_days.count + excluded.count`,
      [companyId, at.toISOString().slice(0, 10), Math.floor(count)],
    );
    await this.warnOnThresholds(companyId);
  }

  private async warnOnThresholds(companyId: number): Promise<void> {
    const company = await this.dataSource.getRepository(Company).findOne({
      where: { id: companyId },
      select: { id: true, quota: true, used: true, quotaWarnedAt80: true, quotaWarnedAt100: true },
    });
    if (!company || company.quota <= 0) return;
    const thresholds = [
      { percent: 80, column: 'quota_warned_at80', warned: company.quotaWarnedAt80 },
      { percent: 100, column: 'quota_warned_at100', warned: company.quotaWarnedAt100 },
    ] as const;
    for (const t of thresholds) {
      if (t.warned || company.used * 100 < company.quota * t.percent) continue;
      const claimed = await this.dataSource
        .createQueryBuilder()
        .update(Company)
        .set({ [t.percent === 80 ? 'quotaWarnedAt80' : 'quotaWarnedAt100']: new Date() })
        .where(`id = :id AND ${t.column} IS NULL`, { id: companyId })
        .execute();
      if ((claimed.affected ?? 0) !== 1) continue;
      await this.notifications.notifyCompanyUsers(companyId, {
        type: t.percent === 80 ? 'quota.80' : 'quota.100',
        title: t.percent === 80 ? 'You have used 80% of your quota' : 'Your quota is used up',
        body:
          t.percent === 80
            ? `Your company has sent ${company.used} of ${company.quota} messages this period.`
            : `Your company has sent ${company.used} of ${company.quota} messages this period. The relay refuses new mail until the period renews or you buy more.`,
        data: { used: company.used, quota: company.quota },
        email: true,
        link: '/billing',
      });
    }
  }
}
