import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { EntityManager, IsNull, Repository } from 'typeorm';
import { TransactionService } from '../../database/transaction.service';
import { CompaniesService } from '../companies/companies.service';
import { DeliveryRecordsService } from '../delivery/delivery-records.service';
import { Job } from '../jobs/job.decorator';
import { Notifier } from '../notifications/notifier';
import { WebhookOutbox } from '../webhooks/webhook-outbox';
import { hourOf } from './deliverability-roll-up';
import {
  ACCEPTED_STATUSES,
  alertDto,
  DeliverabilityReportsService,
  GIVEN_UP_STATUSES,
  HANDED_OVER_STATUSES,
  mostFrequent,
} from './deliverability-reports.service';
import { AlertKind, AlertLevel, DeliverabilityAlert } from './entities/deliverability-alert.entity';
import { DeliverabilityHour } from './entities/deliverability-hour.entity';

/** deliverability.md "Alerts": fractions of the provider's messages. */
export const ALERT_THRESHOLDS: Readonly<Record<AlertKind, { warning: number; critical: number }>> = {
  'complaint-rate': { warning: 0.001, critical: 0.003 },
  'hard-bounce-rate': { warning: 0.02, critical: 0.05 },
  blocked: { warning: 0.01, critical: 0.05 },
};
/** Messages to a provider in the 7 days below which nothing is judged. */
export const MIN_MESSAGES = 100;
const HOUR_MS = 3_600_000;
const RESOLVE_AFTER_MS = 24 * HOUR_MS;
/** Block categories that say the provider distrusts the sender (the `blocked` alert). */
const DISTRUST = new Set(['reputation', 'authentication']);
/** Records classified by the backfill in one transaction, and how long one run of the job spends on it. */
const BACKFILL_CHUNK = 500;
const BACKFILL_BUDGET_MS = 20_000;

const PROVIDER_NAMES: Record<string, string> = {
  gmail: 'Gmail',
  microsoft: 'Microsoft',
  yahoo: 'Yahoo',
  apple: 'Apple',
  other: 'other providers',
};

/** One company's figures at one provider. */
interface Reading {
  companyId: number;
  provider: string;
  messages7d: number;
  accepted7d: number;
  complained7d: number;
  hard7d: number;
  hardRules: Map<string, number>;
  messages24h: number;
  distrust24h: number;
  distrustRules: Map<string, number>;
}

interface Judged {
  value: number;
  level: AlertLevel | null;
  threshold: number;
  sampleRule: string | null;
}

const LEVEL_RANK: Record<AlertLevel, number> = { warning: 1, critical: 2 };

/**
 * The `deliverability-alerts` job (deliverability.md "Alerts"), hourly: classifies records built
 * before deliverability existed (a bounded share each run, a short transaction per chunk), then
 * judges every company at every provider from the hourly roll-up (one grouped read, however many
 * records), opening, raising and resolving alerts. An opening or a rise notifies the company's
 * owners (an e-mail when critical), sends the `deliverability.alert` webhook event, and tells the
 * admins of a critical one, in the transaction that records it.
 */
@Injectable()
export class DeliverabilityAlertsService {
  private readonly logger = new Logger(DeliverabilityAlertsService.name);

  constructor(
    @InjectRepository(DeliverabilityHour) private readonly hours: Repository<DeliverabilityHour>,
    @InjectRepository(DeliverabilityAlert) private readonly alerts: Repository<DeliverabilityAlert>,
    private readonly transactions: TransactionService,
    private readonly records: DeliveryRecordsService,
    private readonly reports: DeliverabilityReportsService,
    private readonly companies: CompaniesService,
    private readonly notifier: Notifier,
    private readonly webhooks: WebhookOutbox,
  ) {}

  /** Answers how many records it classified and alerts it opened, raised or resolved. */
  @Job('deliverability-alerts')
  async runJob(now: Date = new Date()): Promise<number> {
    return (await this.classifyBuiltBefore()) + (await this.evaluate(now));
  }

  /** Records built before providers and bounce classes existed, chunk by chunk, for a bounded time. */
  async classifyBuiltBefore(budgetMs = BACKFILL_BUDGET_MS): Promise<number> {
    const started = Date.now();
    let classified = 0;
    for (;;) {
      const n = await this.transactions.run((em) => this.records.classifyBuiltBefore(em, BACKFILL_CHUNK));
      classified += n;
      if (n < BACKFILL_CHUNK || Date.now() - started > budgetMs) return classified;
      await nextTurn();
    }
  }

  /** Judges every company at every provider as of `now`; answers how many alerts changed state or level. */
  async evaluate(now: Date = new Date()): Promise<number> {
    const readings = await this.readings(now);
    const open = new Map(
      (await this.alerts.find({ where: { resolvedAt: IsNull() } })).map((a) => [keyOf(a), a]),
    );
    let changed = 0;
    for (const reading of readings.values()) {
      for (const kind of Object.keys(ALERT_THRESHOLDS) as AlertKind[]) {
        const key = keyOf({ ...reading, kind });
        changed += await this.apply(reading, kind, judge(reading, kind), open.get(key), now);
        open.delete(key);
      }
    }
    // Open alerts of a company or provider with no messages left in the window: nothing is above.
    for (const alert of open.values()) {
      changed += await this.apply(
        null,
        alert.kind,
        { value: 0, level: null, threshold: 0, sampleRule: null },
        alert,
        now,
      );
    }
    return changed;
  }

  private async readings(now: Date): Promise<Map<string, Reading>> {
    const rows = await this.hours
      .createQueryBuilder('h')
      .select(['h.company_id AS company_id', 'h.provider AS provider', 'h.status AS status'])
      .addSelect([
        'h.bounce_type AS bounce_type',
        'h.bounce_category AS bounce_category',
        'h.bounce_rule AS bounce_rule',
      ])
      .addSelect('SUM(h.records)', 'n')
      .addSelect('SUM(CASE WHEN h.hour >= :since24h THEN h.records ELSE 0 END)', 'recent')
      .where('h.hour >= :since7d AND h.hour <= :hour AND h.company_id <> 0', {
        since7d: hourOf(new Date(now.getTime() - 167 * HOUR_MS)),
        since24h: hourOf(new Date(now.getTime() - 23 * HOUR_MS)),
        hour: hourOf(now),
      })
      .andWhere('h.status IN (:...handedOver)', { handedOver: HANDED_OVER_STATUSES })
      .groupBy('h.company_id, h.provider, h.status, h.bounce_type, h.bounce_category, h.bounce_rule')
      .getRawMany<{
        company_id: number | string;
        provider: string;
        status: string;
        bounce_type: string;
        bounce_category: string;
        bounce_rule: string;
        n: number | string;
        recent: number | string;
      }>();
    const readings = new Map<string, Reading>();
    for (const row of rows) {
      const companyId = Number(row.company_id);
      const key = `${companyId}\n${row.provider}`;
      let r = readings.get(key);
      if (!r) {
        r = {
          companyId,
          provider: row.provider,
          messages7d: 0,
          accepted7d: 0,
          complained7d: 0,
          hard7d: 0,
          hardRules: new Map(),
          messages24h: 0,
          distrust24h: 0,
          distrustRules: new Map(),
        };
        readings.set(key, r);
      }
      const n = Number(row.n);
      const recent = Number(row.recent);
      r.messages7d += n;
      r.messages24h += recent;
      if (ACCEPTED_STATUSES.includes(row.status)) r.accepted7d += n;
      if (row.status === 'complained') r.complained7d += n;
      if (GIVEN_UP_STATUSES.includes(row.status) && row.bounce_type === 'hard') {
        r.hard7d += n;
        r.hardRules.set(row.bounce_rule, (r.hardRules.get(row.bounce_rule) ?? 0) + n);
      }
      if (row.bounce_type === 'block' && DISTRUST.has(row.bounce_category) && recent > 0) {
        r.distrust24h += recent;
        r.distrustRules.set(row.bounce_rule, (r.distrustRules.get(row.bounce_rule) ?? 0) + recent);
      }
    }
    return readings;
  }

  /** Opens, raises, updates or resolves one alert; answers 1 when it opened, rose or resolved. */
  private async apply(
    reading: Reading | null,
    kind: AlertKind,
    judged: Judged,
    existing: DeliverabilityAlert | undefined,
    now: Date,
  ): Promise<number> {
    if (!existing && !judged.level) return 0;
    if (!existing) {
      await this.open(reading!, kind, judged, now);
      return 1;
    }
    if (!judged.level) {
      const resolve = now.getTime() - existing.lastAboveAt.getTime() >= RESOLVE_AFTER_MS;
      await this.alerts.update(
        { id: existing.id },
        { value: judged.value, ...(resolve && { resolvedAt: now }) },
      );
      return resolve ? 1 : 0;
    }
    const rose = LEVEL_RANK[judged.level] > LEVEL_RANK[existing.level];
    const sampleResponse = await this.sampleOf(existing.companyId, judged.sampleRule);
    await this.transactions.run(async (em) => {
      await em.update(
        DeliverabilityAlert,
        { id: existing.id },
        {
          level: judged.level!,
          value: judged.value,
          threshold: judged.threshold,
          lastAboveAt: now,
          sampleRule: judged.sampleRule,
          sampleResponse,
        },
      );
      if (rose) {
        Object.assign(existing, {
          level: judged.level!,
          value: judged.value,
          threshold: judged.threshold,
          sampleRule: judged.sampleRule,
          sampleResponse,
        });
        await this.tell(em, existing);
      }
    });
    return rose ? 1 : 0;
  }

  private async open(reading: Reading, kind: AlertKind, judged: Judged, now: Date): Promise<void> {
    const sampleResponse = await this.sampleOf(reading.companyId, judged.sampleRule);
    await this.transactions.run(async (em) => {
      const alert = em.create(DeliverabilityAlert, {
        companyId: reading.companyId,
        provider: reading.provider,
        kind,
        level: judged.level!,
        value: judged.value,
        threshold: judged.threshold,
        openedAt: now,
        resolvedAt: null,
        lastAboveAt: now,
        sampleRule: judged.sampleRule,
        sampleResponse,
      });
      await em.save(alert);
      await this.tell(em, alert);
    });
  }

  /** The owners' notification (e-mailed when critical), the webhook event, and the admins for a critical one. */
  private async tell(em: EntityManager, alert: DeliverabilityAlert): Promise<void> {
    const [company] = await this.companies.byIds([alert.companyId]);
    if (!company) return;
    alert.company = company;
    const dto = alertDto(alert);
    const critical = alert.level === 'critical';
    const title = `${critical ? 'Critical' : 'Warning'}: ${describe(alert)} at ${PROVIDER_NAMES[alert.provider] ?? alert.provider}`;
    const body =
      `${percent(alert.value)} over the threshold of ${percent(alert.threshold)}.` +
      (alert.sampleResponse ? ` Most frequent reply (${alert.sampleRule}): ${alert.sampleResponse}` : '');
    const data = { alertUuid: alert.uuid, provider: alert.provider, kind: alert.kind, level: alert.level };
    await this.notifier.notifyCompanyOwners(
      alert.companyId,
      { type: 'deliverability.alert', title, body, data, email: critical, link: '/reports/deliverability' },
      em,
    );
    if (critical) {
      await this.notifier.notifyAdmins(
        ['superAdmin', 'admin'],
        {
          type: 'deliverability.alert',
          title: `${company.name}: ${title}`,
          body,
          data: { ...data, companyUuid: company.uuid },
        },
        em,
      );
    }
    await this.webhooks.emit(em, [
      {
        companyId: alert.companyId,
        type: 'deliverability.alert',
        fact: `${alert.uuid}\n${alert.level}`,
        data: { ...dto },
      },
    ]);
    this.logger.log(
      `Deliverability alert ${alert.kind} ${alert.level} for company ${company.uuid} at ${alert.provider}`,
    );
  }

  private async sampleOf(companyId: number, rule: string | null): Promise<string | null> {
    if (!rule) return null;
    return (await this.reports.latestResponses(companyId, [rule])).get(rule) ?? null;
  }
}

/** A company's rate of one kind at one provider, and the level it reaches. */
export function judge(
  r: Pick<
    Reading,
    | 'messages7d'
    | 'accepted7d'
    | 'complained7d'
    | 'hard7d'
    | 'hardRules'
    | 'messages24h'
    | 'distrust24h'
    | 'distrustRules'
  >,
  kind: AlertKind,
): Judged {
  const value =
    kind === 'complaint-rate'
      ? ratio(r.complained7d, r.accepted7d)
      : kind === 'hard-bounce-rate'
        ? ratio(r.hard7d, r.messages7d)
        : ratio(r.distrust24h, r.messages24h);
  const rules =
    kind === 'hard-bounce-rate'
      ? r.hardRules
      : kind === 'blocked'
        ? r.distrustRules
        : new Map<string, number>();
  const sampleRule = rules.size ? mostFrequent(rules) : null;
  const { warning, critical } = ALERT_THRESHOLDS[kind];
  if (r.messages7d < MIN_MESSAGES) return { value, level: null, threshold: warning, sampleRule };
  const level: AlertLevel | null = value >= critical ? 'critical' : value >= warning ? 'warning' : null;
  return { value, level, threshold: level === 'critical' ? critical : warning, sampleRule };
}

const ratio = (part: number, whole: number) => (whole > 0 ? part / whole : 0);
const percent = (fraction: number) => `${(fraction * 100).toFixed(2)} %`;
const keyOf = (a: { companyId: number; provider: string; kind: string }) =>
  `${a.companyId}\n${a.provider}\n${a.kind}`;

function describe(alert: Pick<DeliverabilityAlert, 'kind'>): string {
  switch (alert.kind) {
    case 'complaint-rate':
      return 'complaint rate';
    case 'hard-bounce-rate':
      return 'hard bounce rate';
    case 'blocked':
      return 'mail blocked';
  }
}
