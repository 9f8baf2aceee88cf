import { isoString } from '../../common/iso-string';
import { Injectable, Module } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { SqlDialect } from '../../database/sql-dialect';
import { TransactionService } from '../../database/transaction.service';
import type { CleanRecord } from '../log-index/clean-record';
import { BounceSample } from './entities/bounce-sample.entity';
import { DeliverabilityHour } from './entities/deliverability-hour.entity';

type Cell = Omit<DeliverabilityHour, 'records' | 'shard'>;

/** `YYYY-MM-DDTHH` (UTC) of a moment: the roll-up's hour. */
export const hourOf = (at: Date): string => isoString(at).slice(0, 13);

const cellOf = (r: CleanRecord): Cell => ({
  companyId: r.companyId ?? 0,
  hour: hourOf(new Date(r.lastEventAt)),
  senderDomain: r.senderDomain ?? '',
  provider: r.provider ?? 'other',
  status: r.status,
  bounceType: r.bounceType ?? '',
  bounceCategory: r.bounceCategory ?? '',
  bounceRule: r.bounceRule ?? '',
});

const cellKey = (c: Cell): string =>
  [
    c.companyId,
    c.hour,
    c.senderDomain,
    c.provider,
    c.status,
    c.bounceType,
    c.bounceCategory,
    c.bounceRule,
  ].join('\n');

/**
 * Keeps the deliverability roll-up (`deliverability_hourly`) and the bounce samples in step with
 * the clean records, in the transaction that writes them: each record moves from the cell of its
 * stored version to the cell of the version just built. A stored version without a provider was
 * built before the roll-up existed and is in no cell (the backfill adds it when it classifies it).
 */
@Injectable()
export class DeliverabilityRollUp {
  constructor(
    private readonly dialect: SqlDialect,
    private readonly transactions: TransactionService,
  ) {}

  async move(
    em: EntityManager,
    records: CleanRecord[],
    before: ReadonlyMap<string, CleanRecord>,
  ): Promise<void> {
    const deltas = new Map<string, { key: Cell; n: number }>();
    const add = (r: CleanRecord, n: 1 | -1) => {
      const key = cellOf(r);
      const id = cellKey(key);
      const delta = deltas.get(id) ?? { key, n: 0 };
      delta.n += n;
      deltas.set(id, delta);
    };
    const shard = this.transactions.counterShard(em);
    const samples = new Map<string, BounceSample>();
    for (const record of records) {
      const old = before.get(record.id);
      if (old?.provider) add(old, -1);
      add(record, 1);
      if (record.bounceRule && record.response && record.response !== old?.response) {
        const companyId = record.companyId ?? 0;
        samples.set(`${companyId}\n${record.bounceRule}`, {
          companyId,
          rule: record.bounceRule,
          shard,
          response: record.response.slice(0, 500),
          at: new Date(record.lastEventAt),
        });
      }
    }
    const moved = [...deltas.values()].filter((d) => d.n !== 0);
    if (moved.length) {
      await this.dialect.addToCounters(
        em,
        DeliverabilityHour,
        moved.map(({ key, n }) => ({ key: { ...key, shard }, add: { records: n } })),
      );
    }
    if (samples.size) {
      await this.dialect.insertMany(em, BounceSample, [...samples.values()], {
        key: ['companyId', 'rule', 'shard'],
        update: ['response', 'at'],
      });
    }
  }
}

/** The roll-up alone, for the delivery records' rebuild. */
@Module({
  providers: [DeliverabilityRollUp],
  exports: [DeliverabilityRollUp],
})
export class DeliverabilityRollUpModule {}
