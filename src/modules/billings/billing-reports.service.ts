import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { BadRequestError } from '../../common/errors/domain-error';
import { SqlDialect } from '../../database/sql-dialect';
import { RevenueSummaryQueryDto, SummaryInterval } from './dto/billing-requests.dto';
import {
  BillingStatusCountsDto,
  RevenueRowDto,
  RevenueSummaryDto,
  RevenueTotalDto,
} from './dto/billing-response.dto';
import { DAY_MS, toDateWindow } from '../../common/validation/date-filter';
import { BILLING_STATUSES, Billing, BillingStatus } from './entities/billing.entity';

export const MAX_SUMMARY_DAYS = 366;

interface RawRow {
  period: string;
  currency: string;
  amount: string | number | null;
  count: string | number;
}

/** Revenue per period and currency, and billings per status, for admins (accounting). */
@Injectable()
export class BillingReportsService {
  constructor(
    @InjectRepository(Billing) private readonly billings: Repository<Billing>,
    private readonly dialect: SqlDialect,
  ) {}

  async summary(q: RevenueSummaryQueryDto): Promise<RevenueSummaryDto> {
    const { from, toExclusive } = toDateWindow(q.from, q.to);
    if (!from || !toExclusive) throw new BadRequestError('from and to are required');
    if (toExclusive.getTime() - from.getTime() > MAX_SUMMARY_DAYS * DAY_MS) {
      throw new BadRequestError(`The window from..to must not exceed ${MAX_SUMMARY_DAYS} days`);
    }
    const interval = q.interval ?? 'month';
    const [revenue, refunds, counts] = await Promise.all([
      this.revenueRows('paid', interval, from, toExclusive),
      this.revenueRows('refunded', interval, from, toExclusive),
      this.statusCounts(from, toExclusive),
    ]);
    return { from, to: toExclusive, interval, revenue, refunds, totals: totals(revenue, refunds), counts };
  }

  /** Billings with this status whose payment time falls in the window, by period and currency. */
  private async revenueRows(
    status: BillingStatus,
    interval: SummaryInterval,
    from: Date,
    toExclusive: Date,
  ): Promise<RevenueRowDto[]> {
    const period = this.periodExpression(interval);
    const rows = await this.billings
      .createQueryBuilder('billing')
      .select(period, 'period')
      .addSelect('billing.currency', 'currency')
      .addSelect('SUM(COALESCE(billing.paid_amount, billing.amount))', 'amount')
      .addSelect('COUNT(*)', 'count')
      .where('billing.status = :status', { status })
      .andWhere('billing.paid_at >= :from AND billing.paid_at < :to', { from, to: toExclusive })
      .groupBy(period)
      .addGroupBy('billing.currency')
      .orderBy('period', 'ASC')
      .addOrderBy('currency', 'ASC')
      .getRawMany<RawRow>();
    return rows.map((r) => ({
      period: r.period,
      currency: r.currency,
      amount: Number(r.amount ?? 0),
      count: Number(r.count),
    }));
  }

  /** Billings created in the window, per current status (every status present, 0 when none). */
  private async statusCounts(from: Date, toExclusive: Date): Promise<BillingStatusCountsDto> {
    const rows = await this.billings
      .createQueryBuilder('billing')
      .select('billing.status', 'status')
      .addSelect('COUNT(*)', 'count')
      .where('billing.created_at >= :from AND billing.created_at < :to', { from, to: toExclusive })
      .groupBy('billing.status')
      .getRawMany<{ status: BillingStatus; count: string | number }>();
    const counts = Object.fromEntries(BILLING_STATUSES.map((s) => [s, 0])) as Record<BillingStatus, number>;
    for (const r of rows) if (r.status in counts) counts[r.status] = Number(r.count);
    return counts;
  }

  /** The UTC period of `paid_at`: `YYYY-MM-DD` or `YYYY-MM`. */
  private periodExpression(interval: SummaryInterval): string {
    return this.dialect.utcPeriod('billing.paid_at', interval);
  }
}

function totals(revenue: RevenueRowDto[], refunds: RevenueRowDto[]): RevenueTotalDto[] {
  const byCurrency = new Map<string, RevenueTotalDto>();
  const entry = (currency: string) => {
    let t = byCurrency.get(currency);
    if (!t) {
      t = { currency, revenue: 0, paidCount: 0, refunded: 0, refundedCount: 0 };
      byCurrency.set(currency, t);
    }
    return t;
  };
  for (const r of revenue) {
    const t = entry(r.currency);
    t.revenue += r.amount;
    t.paidCount += r.count;
  }
  for (const r of refunds) {
    const t = entry(r.currency);
    t.refunded += r.amount;
    t.refundedCount += r.count;
  }
  return [...byCurrency.values()].sort((a, b) => a.currency.localeCompare(b.currency));
}
