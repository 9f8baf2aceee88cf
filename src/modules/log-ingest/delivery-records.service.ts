import { Injectable } from '@nestjs/common';
import { EntityManager, In } from 'typeorm';
import { SqlDialect } from '../../database/sql-dialect';
import { CompanyRelayLookup } from '../companies/company-relay-lookup';
import { CompanyStateService } from '../companies/company-state.service';
import { DomainLookup } from '../domains/domain-lookup';
import type { CleanRecord } from '../log-index/clean-record';
import { LogIndex } from '../log-index/log-index';
import { ProviderEventLookup, StoredProviderEvent } from '../provider-events/provider-event-lookup';
import { SuppressionService } from '../suppression/suppression.service';
import {
  buildQueuedRecord,
  buildRejectRecord,
  COUNTED_STATUSES,
  domainOfAddress,
  isHardBounce,
  RecordCompany,
  recordChanged,
} from './clean-record-builder';
import { PostfixDelivery } from './entities/postfix-delivery.entity';
import { PostfixQueue } from './entities/postfix-queue.entity';
import { QuotaCountedRecord } from './entities/quota-counted-record.entity';

const CHUNK = 500;

export interface QueueKey {
  host: string;
  queueId: string;
}

const keyOf = (host: string, queueId: string) => `${host}\n${queueId}`;

/**
 * (Re)builds clean records from what is stored (the queues' facts, their delivery lines, the
 * provider events of their recipients) and applies what a new record or a change brings: the
 * quota count (once per record, kept in `quota_counted_records`), suppression of hard bounces,
 * complaints and unsubscribes, and the provider events it matched. Runs inside the caller's
 * transaction, so a batch's facts, records, counts and entries commit together.
 */
@Injectable()
export class DeliveryRecordsService {
  constructor(
    private readonly dialect: SqlDialect,
    private readonly index: LogIndex,
    private readonly companies: CompanyRelayLookup,
    private readonly domains: DomainLookup,
    private readonly companyState: CompanyStateService,
    private readonly suppression: SuppressionService,
    private readonly providerEvents: ProviderEventLookup,
  ) {}

  /** Answers how many clean records were created or changed. */
  async rebuild(em: EntityManager, queues: QueueKey[], rejects: PostfixDelivery[]): Promise<number> {
    const wanted = new Set(queues.map((q) => keyOf(q.host, q.queueId)));
    const queueRows = (await this.lockedQueues(em, queues)).filter((q) =>
      wanted.has(keyOf(q.host, q.queueId)),
    );
    const deliveries = (await this.inChunks(em, PostfixDelivery, queues)).filter(
      (d) => d.queueId !== null && wanted.has(keyOf(d.host, d.queueId)),
    );
    const companyOf = this.companyResolver();

    const byRecipient = new Map<string, PostfixDelivery[]>();
    for (const d of deliveries) {
      const key = `${keyOf(d.host, d.queueId!)}\n${d.recipient}`;
      byRecipient.set(key, [...(byRecipient.get(key) ?? []), d]);
    }
    const events = await this.providerEvents.ofRecipients([...deliveries.map((d) => d.recipient)], em);
    const queueByKey = new Map(queueRows.map((q) => [keyOf(q.host, q.queueId), q]));

    const built: Array<{ record: CleanRecord; matched: StoredProviderEvent[] }> = [];
    for (const group of byRecipient.values()) {
      const first = group[0];
      const queue = queueByKey.get(keyOf(first.host, first.queueId!));
      if (!queue) continue;
      const company = await companyOf(queue.saslUsername, queue.sender);
      const bare = buildQueuedRecord(queue, group, [], company);
      const matched = events.filter((e) => matches(e, bare));
      built.push({
        record: matched.length ? buildQueuedRecord(queue, group, matched, company) : bare,
        matched,
      });
    }
    for (const reject of rejects) {
      const company = await companyOf(null, reject.sender);
      built.push({ record: buildRejectRecord(reject.host, reject, company), matched: [] });
    }

    const before = new Map(
      (
        await this.index.getMany(
          built.map((b) => b.record.id),
          em,
        )
      ).map((r) => [r.id, r]),
    );
    const changed = built.filter((b) => recordChanged(before.get(b.record.id), b.record));
    await this.index.write(
      changed.map((b) => b.record),
      em,
      [...before.values()],
    );
    await this.countUsage(
      em,
      changed.map((b) => b.record),
      before,
    );
    await this.suppressHardBounces(
      em,
      changed.map((b) => b.record),
      before,
    );
    await this.applyProviderEvents(em, changed);
    return changed.length;
  }

  /** The records a provider event belongs to, for the webhook: their queues, to rebuild. */
  async queuesOfEvents(
    keys: Array<{ recipient: string; messageId?: string; remoteQueueId?: string }>,
  ): Promise<QueueKey[]> {
    const found = await this.index.locate(keys);
    return found.flatMap((r) => (r.queueId ? [{ host: r.host, queueId: r.queueId }] : []));
  }

  /**
   * +1 for each record that reached a counted status with a known company, once per record ever.
   * The SQL index writes a record in the transaction that counts it, so a record it holds with a
   * counted status for the same company has been counted, and is not offered to
   * `quota_counted_records` again. Elasticsearch may hold a record whose transaction then failed:
   * there every record is offered (the table keeps the count once).
   */
  private async countUsage(
    em: EntityManager,
    records: CleanRecord[],
    before: Map<string, CleanRecord>,
  ): Promise<void> {
    const byCompany = new Map<number, CleanRecord[]>();
    for (const r of records) {
      if (r.companyId === null || !COUNTED_STATUSES.has(r.status)) continue;
      const stored = this.index.kind === 'sql' ? before.get(r.id) : undefined;
      if (stored && stored.companyId === r.companyId && COUNTED_STATUSES.has(stored.status)) continue;
      byCompany.set(r.companyId, [...(byCompany.get(r.companyId) ?? []), r]);
    }
    for (const [companyId, list] of byCompany) {
      const counted = await this.dialect.insertMany(
        em,
        QuotaCountedRecord,
        list.map((r) => ({ recordId: r.id, companyId, countedAt: new Date() })),
        'ignore',
      );
      const latest = list.reduce((a, b) => (a.lastEventAt > b.lastEventAt ? a : b)).lastEventAt;
      await this.companyState.recordUsage(companyId, counted, latest, em);
    }
  }

  /** A record that has just become a Postfix hard bounce suppresses its recipient for its company (`source: log`). */
  private async suppressHardBounces(
    em: EntityManager,
    records: CleanRecord[],
    before: Map<string, CleanRecord>,
  ): Promise<void> {
    const byCompany = new Map<number, string[]>();
    for (const r of records) {
      if (r.companyId === null || r.status !== 'bounced' || before.get(r.id)?.status === 'bounced') continue;
      if (!isHardBounce(r.dsn, r.response)) continue;
      byCompany.set(r.companyId, [...(byCompany.get(r.companyId) ?? []), r.to]);
    }
    for (const [companyId, emails] of byCompany) {
      await this.suppression.add(companyId, { emails, reason: 'hard_bounce', source: 'log' }, em);
    }
  }

  /** Marks the matched provider events applied; the first time, a hard bounce, complaint or unsubscribe suppresses. */
  private async applyProviderEvents(
    em: EntityManager,
    changed: Array<{ record: CleanRecord; matched: StoredProviderEvent[] }>,
  ): Promise<void> {
    const pairs = changed.flatMap(({ record, matched }) =>
      matched
        .filter((e) => e.recordId === null)
        .map((e) => ({ eventId: e.id, recordId: record.id, record, e })),
    );
    if (!pairs.length) return;
    await this.providerEvents.attach(pairs, em);
    for (const { record, e } of pairs) {
      if (record.companyId === null) continue;
      const reason =
        e.type === 'complained'
          ? 'complaint'
          : e.type === 'unsubscribed'
            ? 'unsubscribe'
            : e.type === 'bounced' && e.bounceKind === 'hard'
              ? 'hard_bounce'
              : null;
      if (!reason) continue;
      await this.suppression.add(
        record.companyId,
        { emails: [record.to], reason, source: 'mail_provider', detail: e.reason?.slice(0, 500) ?? null },
        em,
      );
    }
  }

  /**
   * The queues' rows, locked on PostgreSQL (in id order) for the rest of the transaction: a log
   * batch and a provider event rebuilding the same records run one after the other.
   */
  private async lockedQueues(em: EntityManager, queues: QueueKey[]): Promise<PostfixQueue[]> {
    // Both columns of the (host, queue_id) index: the queue id alone cannot use it.
    const hosts = [...new Set(queues.map((q) => q.host))];
    const ids = [...new Set(queues.map((q) => q.queueId))];
    const rows: PostfixQueue[] = [];
    for (let i = 0; i < ids.length; i += CHUNK) {
      const qb = em
        .getRepository(PostfixQueue)
        .createQueryBuilder('queue')
        .where('queue.host IN (:...hosts) AND queue.queue_id IN (:...ids)', {
          hosts,
          ids: ids.slice(i, i + CHUNK),
        })
        .orderBy('queue.id', 'ASC');
      rows.push(...(await this.dialect.forUpdate(qb).getMany()));
    }
    return rows;
  }

  /** Rows of `entity` for these queues: one query per chunk of queue ids (hosts filtered after). */
  private async inChunks<T extends PostfixDelivery>(
    em: EntityManager,
    entity: new () => T,
    queues: QueueKey[],
  ): Promise<T[]> {
    // Both columns of the (host, queue_id) index: the queue id alone cannot use it.
    const hosts = [...new Set(queues.map((q) => q.host))];
    const ids = [...new Set(queues.map((q) => q.queueId))];
    const rows: T[] = [];
    for (let i = 0; i < ids.length; i += CHUNK) {
      rows.push(
        ...(await em.getRepository(entity).find({
          where: { host: In(hosts), queueId: In(ids.slice(i, i + CHUNK)) } as never,
        })),
      );
    }
    return rows;
  }

  /** The company of a message: its SASL username's, else its sender's verified domain's; memoised for one rebuild. */
  private companyResolver(): (sasl: string | null, sender: string | null) => Promise<RecordCompany | null> {
    const memo = new Map<string, Promise<RecordCompany | null>>();
    const resolve = async (sasl: string | null, sender: string | null): Promise<RecordCompany | null> => {
      if (sasl) {
        const company = await this.companies.byRelayUsername(sasl);
        if (company) return { id: company.id, uuid: company.uuid };
      }
      const domain = domainOfAddress(sender);
      if (!domain) return null;
      const owner = await this.domains.verifiedDomainOwner(domain);
      if (owner === null) return null;
      const company = await this.companies.byId(owner);
      return company ? { id: company.id, uuid: company.uuid } : null;
    };
    return (sasl, sender) => {
      const key = `${sasl ?? ''}\n${domainOfAddress(sender) ?? ''}`;
      let found = memo.get(key);
      if (!found) memo.set(key, (found = resolve(sasl, sender)));
      return found;
    };
  }
}

/** resources.md "Clean log": always with the recipient; on the Message-ID, else the provider's id against remoteQueueId. */
function matches(event: StoredProviderEvent, record: CleanRecord): boolean {
  if (event.recordId !== null) return event.recordId === record.id;
  if (event.recipient !== record.to) return false;
  if (event.messageId && record.messageId) return event.messageId === record.messageId;
  return Boolean(
    event.providerMessageId && record.remoteQueueId && event.providerMessageId === record.remoteQueueId,
  );
}
