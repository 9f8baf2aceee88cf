import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Brackets, EntityManager, Repository, SelectQueryBuilder } from 'typeorm';
import { containsPattern } from '../../common/search';
import { chunks } from '../../database/chunks';
import { EntityRowReader } from '../../database/entity-row-reader';
import { SqlDialect } from '../../database/sql-dialect';
import { TransactionService } from '../../database/transaction.service';
import { CleanLogRollUp, CountRow, groupCounts, rollUpAnswers } from './clean-log-roll-up';
import { CleanRecord, LogCounts, LogFilter, LogPosition } from './clean-record';
import { CleanLog } from './entities/clean-log.entity';
import { BounceBreakdown, GroupedCounts, LogIndex, RecordLocation } from './log-index';

/**
 * Rows per page of an export. Measured with 1,000,000 rows: 1,000 a page grew the service's memory
 * by 112 MB (SQLite) and 97 MB (PostgreSQL) while streaming, 500 by 51 MB and 84 MB, in the same
 * time or less; 250 saved nothing more and was slower.
 */
const STREAM_BATCH = 500;
/** What `locate` reads of a record. */
const LOCATED_FIELDS = ['id', 'host', 'queueId', 'to', 'messageId', 'companyId'] as const;

/**
 * The clean-log index in the service's own database (the default): the `clean_logs` table with
 * indexes for (company, lastEventAt), (company, recipient), messageId, queueId and
 * remoteQueueId, and the daily roll-up (CleanLogRollUp), moved in step with every write.
 * Summaries of whole UTC days read the roll-up; other windows group the records themselves.
 */
@Injectable()
export class SqlLogIndex extends LogIndex {
  readonly kind = 'sql' as const;
  /** The export's reader: every column but `events`, from rows fetched raw. */
  private readonly streamed: EntityRowReader<CleanLog>;
  /** The columns a write overwrites: all but the key. */
  private readonly updated: Array<keyof CleanLog>;

  constructor(
    @InjectRepository(CleanLog) private readonly logs: Repository<CleanLog>,
    private readonly rollUp: CleanLogRollUp,
    private readonly dialect: SqlDialect,
    private readonly transactions: TransactionService,
  ) {
    super();
    this.streamed = new EntityRowReader(logs.manager.dataSource, CleanLog, 'log', ['events']);
    this.updated = logs.metadata.columns
      .map((c) => c.propertyName as keyof CleanLog)
      .filter((field) => field !== 'id');
  }

  /**
   * Upserts the records and moves each from its old roll-up cell to its new one; give `em` (a
   * transaction). `previous` must be what the transaction read, under the lock that serialises
   * rebuilds of these records (the ingest's queue rows), or the roll-up moves the wrong cells; a
   * queue's record not among them is inserted as new.
   */
  async write(records: CleanRecord[], previous?: CleanRecord[], em?: EntityManager): Promise<void> {
    if (!records.length) return;
    const manager = em ?? this.logs.manager;
    const stored =
      previous ??
      (await this.getMany(
        records.map((r) => r.id),
        manager,
      ));
    const before = new Map(stored.map((r) => [r.id, r]));
    // A queue's records are written only under its lock, so given `previous`, one not among them
    // is new: inserted without the upsert's conflict check (a sixth of the insert). A reject has no
    // queue to lock (two batches may bring the same one): always upserted.
    const created: CleanRecord[] = [];
    const others: CleanRecord[] = [];
    for (const r of records) {
      (previous !== undefined && r.queueId !== null && !before.has(r.id) ? created : others).push(r);
    }
    await this.dialect.insertMany(manager, CleanLog, created, 'none');
    await this.dialect.insertMany(manager, CleanLog, others, { key: ['id'], update: this.updated });
    // Roll-up cells are shared by the transactions of one shard (replicas may meet): moved last.
    await this.transactions.beforeCommit(em, () => this.rollUp.move(manager, records, before));
  }

  async unclassified(limit: number, em?: EntityManager): Promise<CleanRecord[]> {
    const repo = em ? em.getRepository(CleanLog) : this.logs;
    // ix_clean_logs_unclassified holds exactly these rows.
    return repo
      .createQueryBuilder('log')
      .where('log.provider IS NULL')
      .orderBy('log.id')
      .take(limit)
      .getMany();
  }

  async getMany(ids: string[], em?: EntityManager): Promise<CleanRecord[]> {
    const records: CleanRecord[] = [];
    for (const chunk of chunks(ids)) {
      records.push(...(await this.dialect.findIn(em ?? this.logs.manager, CleanLog, { in: { id: chunk } })));
    }
    return records;
  }

  async locate(
    keys: Array<{ recipient: string; messageId?: string; remoteQueueId?: string }>,
    em?: EntityManager,
  ): Promise<RecordLocation[]> {
    const manager = em ?? this.logs.manager;
    const messageIds = [...new Set(keys.flatMap((k) => (k.messageId ? [k.messageId] : [])))];
    const remoteIds = [...new Set(keys.flatMap((k) => (k.remoteQueueId ? [k.remoteQueueId] : [])))];
    const wanted = new Set(keys.map((k) => k.recipient));
    const found = new Map<string, RecordLocation>();
    // One query per index: an OR of the two makes SQLite scan the table.
    for (const [field, values] of [
      ['messageId', messageIds],
      ['remoteQueueId', remoteIds],
    ] as const) {
      for (const chunk of chunks(values)) {
        const rows = await this.dialect.findIn(manager, CleanLog, { in: { [field]: chunk } }, LOCATED_FIELDS);
        for (const row of rows) {
          if (wanted.has(row.to)) {
            const { id, host, queueId, to, messageId, companyId } = row;
            found.set(id, { id, host, queueId, recipient: to, messageId, companyId });
          }
        }
      }
    }
    return [...found.values()];
  }

  async countsByDay(filter: LogFilter): Promise<Array<{ day: string; counts: LogCounts }>> {
    if (rollUpAnswers(filter)) {
      const days = await this.rollUp.countsBy(filter, 'day');
      return days.map(({ key, counts }) => ({ day: String(key), counts }));
    }
    const day = this.dialect.utcPeriod('log.last_event_at', 'day');
    const rows = await this.countQuery(filter)
      .addSelect(day, 'key')
      .groupBy(`${day}, log.status`)
      .getRawMany<CountRow>();
    return groupCounts(rows).map(({ key, counts }) => ({ day: String(key), counts }));
  }

  async countsBy(filter: LogFilter, key: 'senderDomain' | 'companyId'): Promise<GroupedCounts[]> {
    if (rollUpAnswers(filter)) return this.rollUp.countsBy(filter, key);
    const column = key === 'senderDomain' ? 'log.sender_domain' : 'log.company_id';
    const rows = await this.countQuery(filter)
      .addSelect(column, 'key')
      .groupBy(`${column}, log.status`)
      .getRawMany<CountRow>();
    return groupCounts(rows);
  }

  async bounces(filter: LogFilter, top: number): Promise<BounceBreakdown> {
    const bounced: LogFilter = { ...filter, status: 'bounced' };
    const reasons = await this.filtered(bounced)
      .select('log.dsn', 'dsn')
      .addSelect('COUNT(*)', 'count')
      .addSelect('MAX(log.response)', 'example')
      .groupBy('log.dsn')
      .orderBy('count', 'DESC')
      .addOrderBy('dsn', 'ASC')
      .limit(top)
      .getRawMany<{ dsn: string | null; count: string | number; example: string | null }>();
    const domain = this.dialect.domainOf('log.recipient');
    const domains = await this.filtered(bounced)
      .select(domain, 'domain')
      .addSelect('COUNT(*)', 'count')
      .groupBy(domain)
      .orderBy('count', 'DESC')
      .addOrderBy('domain', 'ASC')
      .limit(top)
      .getRawMany<{ domain: string; count: string | number }>();
    return {
      reasons: reasons.map((r) => ({ dsn: r.dsn, count: Number(r.count), example: r.example })),
      domains: domains.map((d) => ({ domain: d.domain, count: Number(d.count) })),
    };
  }

  async search(
    filter: LogFilter,
    limit: number,
    after?: LogPosition,
  ): Promise<{ items: CleanRecord[]; total: number }> {
    const [items, total] = await Promise.all([this.page(filter, limit, after), this.total(filter)]);
    return { items, total };
  }

  /**
   * One page per step of the iteration, read when the consumer asks for it. better-sqlite3 answers
   * synchronously (TypeORM's promise is already resolved), so each page after the first waits for
   * a turn of the event loop first: without it an export read as fast as it came ran in one chain
   * of microtasks and held every other request (100,000 rows: 6 s on a loaded test machine).
   */
  async *stream(filter: LogFilter, max: number): AsyncIterable<CleanRecord[]> {
    let after: LogPosition | undefined;
    let left = max;
    while (left > 0) {
      if (after) await nextTurn();
      // Raw rows read by the entity's own reader, not hydrated by the query builder: a million of
      // them are read here, and the events are not wanted.
      const rows = await this.filtered(filter, after)
        .select(this.streamed.selectList())
        .orderBy('log.last_event_at', 'DESC')
        .addOrderBy('log.id', 'DESC')
        .limit(Math.min(STREAM_BATCH, left))
        .getRawMany<Record<string, unknown>>();
      if (!rows.length) return;
      const records = rows.map((raw) => {
        const record = this.streamed.read(Object.values(raw));
        record.events = [];
        return record;
      });
      yield records;
      left -= records.length;
      const last = records[records.length - 1];
      after = { at: last.lastEventAt, id: last.id };
    }
  }

  async isUp(): Promise<boolean> {
    try {
      await this.logs.query('SELECT 1 FROM clean_logs WHERE 1 = 0');
      return true;
    } catch {
      return false;
    }
  }

  private page(filter: LogFilter, limit: number, after?: LogPosition): Promise<CleanLog[]> {
    return this.filtered(filter, after)
      .orderBy('log.last_event_at', 'DESC')
      .addOrderBy('log.id', 'DESC')
      .take(limit)
      .getMany();
  }

  /** How many records the filter holds: from the roll-up when it can answer (whole days), else counted. */
  private total(f: LogFilter): Promise<number> {
    return rollUpAnswers({ ...f, status: undefined }) ? this.rollUp.total(f) : this.filtered(f).getCount();
  }

  private countQuery(filter: LogFilter): SelectQueryBuilder<CleanLog> {
    return this.filtered(filter)
      .select('log.status', 'status')
      .addSelect('COUNT(*)', 'n')
      .addSelect('SUM(CASE WHEN log.opened THEN 1 ELSE 0 END)', 'opened')
      .addSelect('SUM(CASE WHEN log.clicked THEN 1 ELSE 0 END)', 'clicked');
  }

  /**
   * The records of the filter, newest first from `after` when given (a keyset page): each page
   * starts where the last ended on the (company, lastEventAt, id) index instead of scanning down
   * to it again. With a position, the window's upper end is the position itself (clamped to
   * `to`): given both bounds, SQLite ranges the index on `< to` and walks down to the position on
   * every page, which made a long export quadratic there.
   */
  private filtered(f: LogFilter, after?: LogPosition): SelectQueryBuilder<CleanLog> {
    const qb = this.logs.createQueryBuilder('log').where('log.last_event_at >= :from', { from: f.from });
    if (!after) {
      qb.andWhere('log.last_event_at < :to', { to: f.toExclusive });
    } else {
      // Every id is non-empty, so (to, '') bounds the rows before `to`.
      const bound = after.at < f.toExclusive ? after : { at: f.toExclusive, id: '' };
      // The plain bound is what PostgreSQL's index uses; the row value orders ties on the id.
      qb.andWhere('log.last_event_at <= :afterAt AND (log.last_event_at, log.id) < (:afterAt, :afterId)', {
        afterAt: bound.at,
        afterId: bound.id,
      });
    }
    if (f.companyId !== 'all') qb.andWhere('log.company_id = :companyId', { companyId: f.companyId });
    if (f.status) qb.andWhere('log.status = :status', { status: f.status });
    if (f.recipient) qb.andWhere('log.recipient = :recipient', { recipient: f.recipient.toLowerCase() });
    if (f.sender) qb.andWhere('LOWER(log.sender) = :sender', { sender: f.sender.toLowerCase() });
    if (f.senderDomain) qb.andWhere('log.sender_domain = :senderDomain', { senderDomain: f.senderDomain });
    if (f.messageId) qb.andWhere('log.message_id = :messageId', { messageId: f.messageId });
    if (f.queueId) qb.andWhere('log.queue_id = :queueId', { queueId: f.queueId });
    if (f.provider) qb.andWhere('log.provider = :provider', { provider: f.provider });
    if (f.bounceCategory) qb.andWhere('log.bounce_category = :category', { category: f.bounceCategory });
    if (f.search) {
      const pattern = containsPattern(f.search);
      qb.andWhere(
        new Brackets((w) => {
          for (const column of ['recipient', 'sender', 'message_id', 'queue_id']) {
            w.orWhere(`LOWER(log.${column}) LIKE :pattern ESCAPE '\\'`, { pattern });
          }
        }),
      );
    }
    return qb;
  }
}
