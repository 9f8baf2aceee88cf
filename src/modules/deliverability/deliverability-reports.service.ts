import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository, SelectQueryBuilder } from 'typeorm';
import { reportWindow } from '../../common/validation/date-filter';
import { CompaniesService } from '../companies/companies.service';
import type { ReportScope } from '../reports/reports.service';
import { BOUNCE_CATEGORIES, type BounceCategory, type BounceType } from './bounce-classifier';
import { hourOf } from './deliverability-roll-up';
import {
  AlertDto,
  AlertsReportDto,
  BounceCategoriesReportDto,
  BounceCategoryItemDto,
  ProviderReportItemDto,
  ProvidersReportDto,
} from './dto/deliverability-responses.dto';
import { AlertState, DeliverabilityAlert } from './entities/deliverability-alert.entity';
import { BounceSample } from './entities/bounce-sample.entity';
import { DeliverabilityHour } from './entities/deliverability-hour.entity';
import { MAILBOX_PROVIDERS, type MailboxProvider } from './mailbox-providers';

/** The roll-up's grouped sums. */
interface CellSum {
  provider: string;
  status: string;
  bounce_type: string;
  bounce_category: string;
  bounce_rule: string;
  n: string | number;
}

/** Handed over and accepted by the provider (the base of the complaint rate). */
export const ACCEPTED_STATUSES = ['sent', 'delivered', 'complained'];
/** Failed for good. */
export const GIVEN_UP_STATUSES = ['bounced', 'expired'];
/** Every outcome of a message handed to a provider (not queued, not refused by our own relay). */
export const HANDED_OVER_STATUSES = [...ACCEPTED_STATUSES, 'deferred', ...GIVEN_UP_STATUSES];
const TOP_CATEGORIES = 5;
const ALERTS_LISTED = 500;

const rate = (part: number, whole: number): number => (whole > 0 ? part / whole : 0);

/**
 * The deliverability reports (deliverability.md "Reports"): per mailbox provider, per bounce
 * category, and the alerts; of one company or of every one. Read from the hourly roll-up, never
 * from the records, over the report's window rounded to whole hours (a date covers its days).
 */
@Injectable()
export class DeliverabilityReportsService {
  constructor(
    @InjectRepository(DeliverabilityHour) private readonly hours: Repository<DeliverabilityHour>,
    @InjectRepository(BounceSample) private readonly samples: Repository<BounceSample>,
    @InjectRepository(DeliverabilityAlert) private readonly alerts: Repository<DeliverabilityAlert>,
    private readonly companies: CompaniesService,
  ) {}

  /** An admin's `companyUuid`: that company (404 when unknown), else every company. */
  async adminScope(companyUuid: string | undefined): Promise<ReportScope> {
    return companyUuid ? await this.companies.idOf(companyUuid) : 'all';
  }

  async providers(
    scope: ReportScope,
    q: { from: string; to: string; domain?: string },
  ): Promise<ProvidersReportDto> {
    const rows = await this.cells(scope, q)
      .select(['h.provider AS provider', 'h.status AS status', 'h.bounce_type AS bounce_type'])
      .addSelect(['h.bounce_category AS bounce_category', "'' AS bounce_rule", 'SUM(h.records) AS n'])
      .andWhere('h.status IN (:...handedOver)', { handedOver: HANDED_OVER_STATUSES })
      .groupBy('h.provider, h.status, h.bounce_type, h.bounce_category')
      .getRawMany<CellSum>();
    return {
      items: MAILBOX_PROVIDERS.map((p: MailboxProvider) =>
        providerItem(
          p,
          rows.filter((r) => r.provider === p),
        ),
      ),
    };
  }

  async bounceCategories(
    scope: ReportScope,
    q: { from: string; to: string; domain?: string; provider?: MailboxProvider },
  ): Promise<BounceCategoriesReportDto> {
    const qb = this.cells(scope, q)
      .select([
        'h.bounce_category AS bounce_category',
        'h.bounce_type AS bounce_type',
        'h.bounce_rule AS bounce_rule',
      ])
      .addSelect(['SUM(h.records) AS n'])
      .andWhere("h.bounce_category <> ''");
    if (q.provider) qb.andWhere('h.provider = :provider', { provider: q.provider });
    const rows = await qb.groupBy('h.bounce_category, h.bounce_type, h.bounce_rule').getRawMany<CellSum>();
    const groups = new Map<
      string,
      { category: BounceCategory; type: BounceType; count: number; rules: Map<string, number> }
    >();
    for (const row of rows) {
      const key = `${row.bounce_category}\n${row.bounce_type}`;
      const group = groups.get(key) ?? {
        category: row.bounce_category as BounceCategory,
        type: row.bounce_type as BounceType,
        count: 0,
        rules: new Map<string, number>(),
      };
      group.count += Number(row.n);
      group.rules.set(row.bounce_rule, (group.rules.get(row.bounce_rule) ?? 0) + Number(row.n));
      groups.set(key, group);
    }
    const chosen = [...groups.values()]
      .filter((g) => g.count > 0)
      .map((g) => ({ ...g, rule: mostFrequent(g.rules) }));
    const responses = await this.latestResponses(
      scope,
      chosen.map((g) => g.rule),
    );
    const items: BounceCategoryItemDto[] = chosen
      .map((g) => ({
        category: g.category,
        type: g.type,
        count: g.count,
        sample: { rule: g.rule, response: responses.get(g.rule) ?? null },
      }))
      .sort(
        (a, b) =>
          b.count - a.count || BOUNCE_CATEGORIES.indexOf(a.category) - BOUNCE_CATEGORIES.indexOf(b.category),
      );
    return { items };
  }

  async alertList(scope: ReportScope, state?: AlertState): Promise<AlertsReportDto> {
    const qb = this.alerts
      .createQueryBuilder('a')
      .innerJoinAndSelect('a.company', 'c')
      .orderBy('a.openedAt', 'DESC')
      .addOrderBy('a.id', 'DESC')
      .take(ALERTS_LISTED);
    if (scope !== 'all') qb.andWhere('a.companyId = :companyId', { companyId: scope });
    if (state === 'open') qb.andWhere('a.resolvedAt IS NULL');
    if (state === 'resolved') qb.andWhere('a.resolvedAt IS NOT NULL');
    return { items: (await qb.getMany()).map(alertDto) };
  }

  /** The latest reply of each rule: the company's own, or any company's for every company. */
  async latestResponses(scope: ReportScope | number, rules: string[]): Promise<Map<string, string>> {
    if (!rules.length) return new Map();
    const found = await this.samples.find({
      where: { rule: In([...new Set(rules)]), ...(scope !== 'all' && { companyId: scope }) },
      order: { at: 'ASC' },
    });
    return new Map(found.map((s) => [s.rule, s.response]));
  }

  private cells(
    scope: ReportScope,
    q: { from: string; to: string; domain?: string },
  ): SelectQueryBuilder<DeliverabilityHour> {
    const window = reportWindow(q.from, q.to);
    const qb = this.hours.createQueryBuilder('h').where('h.hour >= :fromHour AND h.hour < :toHour', {
      fromHour: hourOf(window.from),
      toHour: hourOf(new Date(window.toExclusive.getTime() + 3_600_000 - 1)),
    });
    if (scope !== 'all') qb.andWhere('h.company_id = :companyId', { companyId: scope });
    if (q.domain) qb.andWhere('h.sender_domain = :domain', { domain: q.domain.trim().toLowerCase() });
    return qb;
  }
}

function providerItem(provider: MailboxProvider, rows: CellSum[]): ProviderReportItemDto {
  const sum = (pick: (r: CellSum) => boolean) => rows.filter(pick).reduce((n, r) => n + Number(r.n), 0);
  const givenUp = (type: BounceType) =>
    sum((r) => GIVEN_UP_STATUSES.includes(r.status) && r.bounce_type === type);
  const sent = sum((r) => ACCEPTED_STATUSES.includes(r.status));
  const deferred = sum((r) => r.status === 'deferred');
  const bounced = { hard: givenUp('hard'), soft: givenUp('soft'), block: givenUp('block') };
  const bouncedAll = bounced.hard + bounced.soft + bounced.block;
  const complained = sum((r) => r.status === 'complained');
  const categories = new Map<string, number>();
  for (const r of rows) {
    if (r.bounce_category)
      categories.set(r.bounce_category, (categories.get(r.bounce_category) ?? 0) + Number(r.n));
  }
  return {
    provider,
    sent,
    delivered: sum((r) => r.status === 'delivered' || r.status === 'complained'),
    deferred,
    bounced,
    complained,
    bounceRate: rate(bouncedAll, sent + deferred + bouncedAll),
    complaintRate: rate(complained, sent),
    topCategories: [...categories.entries()]
      .filter(([, count]) => count > 0)
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, TOP_CATEGORIES)
      .map(([category, count]) => ({ category: category as BounceCategory, count })),
  };
}

/** The key with the largest count (the first name on a tie). */
export function mostFrequent(counts: ReadonlyMap<string, number>): string {
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0][0];
}

export function alertDto(a: DeliverabilityAlert): AlertDto {
  return {
    uuid: a.uuid,
    companyUuid: a.company!.uuid,
    provider: a.provider as MailboxProvider,
    kind: a.kind,
    level: a.level,
    value: a.value,
    threshold: a.threshold,
    openedAt: a.openedAt,
    resolvedAt: a.resolvedAt,
    sample: { response: a.sampleResponse, rule: a.sampleRule },
  };
}
