import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository, SelectQueryBuilder } from 'typeorm';
import { SqlDialect } from '../../database/sql-dialect';
import { isoString } from '../../common/iso-string';
import { TransactionService } from '../../database/transaction.service';
import { CLEAN_STATUSES, CleanRecord, CleanStatus, emptyCounts, LogCounts, LogFilter } from './clean-record';
import { CleanLogDay } from './entities/clean-log-day.entity';
import type { GroupedCounts } from './log-index';

/**
 * The SQL index's daily roll-up `clean_log_daily` (CleanLogDay): records by company, UTC day of
 * their last event, sender domain and current status. Every write of records moves each from its
 * old cell to its new one in the writer's transaction; summaries of whole UTC days read it
 * instead of grouping the records.
 */
@Injectable()
export class CleanLogRollUp {
  constructor(
    @InjectRepository(CleanLogDay) private readonly days: Repository<CleanLogDay>,
    private readonly dialect: SqlDialect,
    private readonly transactions: TransactionService,
  ) {}

  /**
   * Moves each record from the cell of its stored version (in `before`, by id; none for a new
   * record) to the cell of the version just written. `before` must be what the transaction read
   * under the lock that serialises rebuilds of these records, or the wrong cells move.
   */
  async move(
    manager: EntityManager,
    records: CleanRecord[],
    before: Map<string, CleanRecord>,
  ): Promise<void> {
    const deltas = new Map<string, { key: DayCell; records: number; opened: number; clicked: number }>();
    const shard = this.transactions.counterShard(manager);
    const move = (r: CleanRecord, sign: 1 | -1) => {
      const key = dayCellOf(r, shard);
      const id = `${key.companyId}\n${key.day}\n${key.senderDomain}\n${key.status}`;
      const delta = deltas.get(id) ?? { key, records: 0, opened: 0, clicked: 0 };
      delta.records += sign;
      if (r.opened) delta.opened += sign;
      if (r.clicked) delta.clicked += sign;
      deltas.set(id, delta);
    };
    for (const record of records) {
      const old = before.get(record.id);
      if (old) move(old, -1);
      move(record, 1);
    }
    await this.dialect.addToCounters(
      manager,
      CleanLogDay,
      [...deltas.values()]
        .filter(({ records: n, opened, clicked }) => n !== 0 || opened !== 0 || clicked !== 0)
        .map(({ key, records: n, opened, clicked }) => ({ key, add: { records: n, opened, clicked } })),
    );
  }

  /** Counts of a window the roll-up answers (see rollUpAnswers), grouped by day, sender domain or company. */
  async countsBy(f: LogFilter, key: 'day' | 'senderDomain' | 'companyId'): Promise<GroupedCounts[]> {
    const column = { day: 'day.day', senderDomain: 'day.sender_domain', companyId: 'day.company_id' }[key];
    const rows = await this.cells(f)
      .addSelect(column, 'key')
      .groupBy(`${column}, day.status`)
      .getRawMany<CountRow>();
    // The roll-up's stand-ins for "none" (company 0, domain '') are null here, as in the records.
    const none = (value: GroupedCounts['key']) =>
      key === 'companyId' ? Number(value) === 0 : key === 'senderDomain' && (value === '' || value === null);
    return groupCounts(rows).map((g) => ({ ...g, key: none(g.key) ? null : g.key }));
  }

  /** How many records a window holds (of one status, when the filter names one). */
  async total(f: LogFilter): Promise<number> {
    const qb = this.cells(f).select('SUM(day.records)', 'n');
    if (f.status) qb.andWhere('day.status = :status', { status: f.status });
    const row = await qb.getRawOne<{ n: string | number | null }>();
    return Number(row?.n ?? 0);
  }

  /** The cells of a window of whole days: (status, n, opened, clicked) sums, grouped as the caller adds. */
  private cells(f: LogFilter): SelectQueryBuilder<CleanLogDay> {
    const qb = this.days
      .createQueryBuilder('day')
      .select('day.status', 'status')
      .addSelect('SUM(day.records)', 'n')
      .addSelect('SUM(day.opened)', 'opened')
      .addSelect('SUM(day.clicked)', 'clicked')
      .where('day.day >= :from AND day.day < :to', {
        from: f.from.toISOString().slice(0, 10),
        to: f.toExclusive.toISOString().slice(0, 10),
      })
      // A shard's row may hold 0 records and still count opens (a record opened where it was).
      .andWhere('(day.records <> 0 OR day.opened <> 0 OR day.clicked <> 0)');
    if (f.companyId !== 'all') qb.andWhere('day.company_id = :companyId', { companyId: f.companyId });
    if (f.senderDomain) qb.andWhere('day.sender_domain = :senderDomain', { senderDomain: f.senderDomain });
    return qb;
  }
}

/** A window of whole UTC days, filtered at most by company and sender domain: the roll-up answers it exactly. */
export function rollUpAnswers(f: LogFilter): boolean {
  const midnight = (d: Date) => d.getTime() % 86_400_000 === 0;
  return (
    midnight(f.from) &&
    midnight(f.toExclusive) &&
    !f.status &&
    !f.recipient &&
    !f.sender &&
    !f.messageId &&
    !f.queueId &&
    !f.search
  );
}

type DayCell = Omit<CleanLogDay, 'records' | 'opened' | 'clicked'>;

function dayCellOf(r: CleanRecord, shard: number): DayCell {
  return {
    companyId: r.companyId ?? 0,
    day: isoString(new Date(r.lastEventAt)).slice(0, 10),
    senderDomain: r.senderDomain ?? '',
    status: r.status,
    shard,
  };
}

/** A row of counts by (key, status), from the roll-up or from the records themselves. */
export interface CountRow {
  key?: string | number | null;
  status: string;
  n: string | number;
  opened: string | number | null;
  clicked: string | number | null;
}

/** Rows of (key, status, n, opened, clicked) folded into counts per key, in the order the keys first appear. */
export function groupCounts(rows: CountRow[]): GroupedCounts[] {
  const byKey = new Map<string | number | null, LogCounts>();
  for (const row of rows) {
    const key = row.key ?? null;
    const counts = byKey.get(key) ?? emptyCounts();
    const n = Number(row.n);
    counts.processed += n;
    if ((CLEAN_STATUSES as readonly string[]).includes(row.status)) counts[row.status as CleanStatus] += n;
    counts.opened += Number(row.opened ?? 0);
    counts.clicked += Number(row.clicked ?? 0);
    byKey.set(key, counts);
  }
  return [...byKey].map(([key, counts]) => ({ key, counts }));
}
