import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { appendTo } from '../../common/append-to';
import { SqlDialect } from '../../database/sql-dialect';
import { TransactionService } from '../../database/transaction.service';
import { CompanyAttribution } from '../attribution/company-attribution.service';
import { CompanyStateService } from '../companies/company-state.service';
import type { CleanRecord } from '../log-index/clean-record';
import { LogIndex } from '../log-index/log-index';
import { NewSuppression, SuppressionService } from '../suppression/suppression.service';
import {
  buildQueuedRecord,
  buildRejectRecord,
  COUNTED_STATUSES,
  RecordCompany,
  recordChanged,
} from './clean-record-builder';
import { PostfixQueue } from './entities/postfix-queue.entity';
import { DeliveryFacts, eventMatchKey, recordMatchKeys, StoredProviderEvent } from './delivery-facts';
import { DeliveryLine, QueueFacts, queueKey } from './parsing/queue-facts';
import { RebuildTargets } from './rebuild-targets';
import { QuotaCountedRecord } from './entities/quota-counted-record.entity';
import { recordWebhookEvents } from './record-webhook-events';
import { DeliverabilityRollUp } from '../deliverability/deliverability-roll-up';
import { deliverabilityOf, providerEventBounce } from '../deliverability/record-deliverability';
import { EmailLinks } from '../emails/email-links';
import { WebhookOutbox } from '../webhooks/webhook-outbox';

export interface RebuildResult {
  /** Clean records created or changed. */
  records: number;
  /** Keys of the provider events left unapplied: their Message-ID names records of several companies. */
  ambiguousEvents: Set<string>;
  /** The records the `unstored` events were applied to, by event key: to store with them. */
  appliedUnstored: Map<string, string>;
}

/**
 * (Re)builds clean records from what is stored (the queues' facts, their delivery lines, the
 * provider events of their recipients) and applies what a new record or a change brings: the
 * quota count (once per record, kept in `quota_counted_records`), suppression of hard bounces,
 * complaints and unsubscribes, the provider events it matched, and the webhook events of what
 * each record gained. Runs inside the caller's transaction, so a batch's facts, records, counts,
 * entries and events commit together.
 */
@Injectable()
export class DeliveryRecordsService {
  constructor(
    private readonly dialect: SqlDialect,
    private readonly index: LogIndex,
    private readonly attribution: CompanyAttribution,
    private readonly companyState: CompanyStateService,
    private readonly suppression: SuppressionService,
    private readonly facts: DeliveryFacts,
    private readonly webhooks: WebhookOutbox,
    private readonly emailLinks: EmailLinks,
    private readonly deliverability: DeliverabilityRollUp,
    private readonly transactions: TransactionService,
  ) {}

  /**
   * Rebuilds the targets' records and the rejects', and answers how many clean records were
   * created or changed, and the provider events that were not applied because their Message-ID
   * names records of more than one company. A queue whose company is not settled yet is rebuilt
   * whole (its records must all name the company decided now). `linesOfCreated`: queues the
   * caller's transaction created, with every line they have (none is read again, and no record of
   * theirs can exist yet). `unstored`: provider events the caller stores once they are applied
   * (DeliveryFacts.eventsOfRecords), each with an id above every stored one, in the order they
   * will be stored.
   */
  async rebuild(
    em: EntityManager,
    targets: RebuildTargets,
    rejects: DeliveryLine[],
    linesOfCreated: ReadonlyMap<string, DeliveryLine[]> = new Map(),
    unstored: readonly StoredProviderEvent[] = [],
  ): Promise<RebuildResult> {
    const queueRows = await this.facts.lockedQueues(em, targets.queues);
    const wanted = targets.withWholeQueues(queueRows.filter((queue) => !queue.attributedAt));
    const deliveries: DeliveryLine[] = await this.facts.deliveriesOf(
      em,
      wanted.without(linesOfCreated.keys()),
    );
    for (const lines of linesOfCreated.values()) deliveries.push(...lines);

    const byRecipient = new Map<string, DeliveryLine[]>();
    for (const d of deliveries) {
      appendTo(byRecipient, `${queueKey(d.host, d.queueId!)}\n${d.recipient}`, d);
    }
    const queueByKey = new Map(queueRows.map((q) => [queueKey(q.host, q.queueId), q]));
    const companies = await this.queueCompanies(em, queueRows);

    const bare: Array<{ queue: PostfixQueue; group: DeliveryLine[]; record: CleanRecord }> = [];
    for (const group of byRecipient.values()) {
      const first = group[0];
      const queue = queueByKey.get(queueKey(first.host, first.queueId!));
      if (!queue) continue;
      bare.push({ queue, group, record: buildQueuedRecord(queue, group, [], companies.get(queue)!) });
    }
    const events = await this.facts.eventsOfRecords(
      em,
      bare.map((b) => b.record),
      unstored,
    );
    const ambiguous = await this.ambiguousEvents(
      em,
      events,
      bare.map((b) => b.record),
    );
    const eventsOf = eventsByRecord(events.filter((e) => !ambiguous.has(e.eventKey)));
    const built: Array<{ record: CleanRecord; matched: StoredProviderEvent[] }> = [];
    for (const { queue, group, record } of bare) {
      const matched = eventsOf(record);
      built.push({
        record: matched.length ? buildQueuedRecord(queue, group, matched, companies.get(queue)!) : record,
        matched,
      });
    }
    for (const reject of rejects) {
      const company = await this.attribution.companyOf({
        clientAddress: reject.clientIp,
        sender: reject.sender,
      });
      built.push({ record: buildRejectRecord(reject.host, reject, recordCompany(company)), matched: [] });
    }

    const links = await this.emailLinks.link(
      em,
      built.map((b) => b.record),
    );
    // A record of a queue created now cannot be stored yet, but in Elasticsearch (a failed transaction's write).
    const mayBeStored = built.filter(
      (b) =>
        this.index.kind !== 'sql' ||
        b.record.queueId === null ||
        !linesOfCreated.has(queueKey(b.record.host, b.record.queueId)),
    );
    const before = new Map(
      (
        await this.index.getMany(
          mayBeStored.map((b) => b.record.id),
          em,
        )
      ).map((r) => [r.id, r]),
    );
    const changed = built.filter((b) => recordChanged(before.get(b.record.id), b.record));
    await this.index.write(
      changed.map((b) => b.record),
      [...before.values()],
      em,
    );
    // The roll-up's cells (shared within a shard) and the companies' quota counters (one row a
    // company for every batch): written at the end of the transaction, their locks held the least.
    await this.transactions.beforeCommit(em, () =>
      this.deliverability.move(
        em,
        changed.map((b) => b.record),
        before,
      ),
    );
    await this.countUsage(
      em,
      changed.map((b) => b.record),
      before,
    );
    await this.suppressHardBounces(em, changed, before);
    const appliedUnstored = await this.applyProviderEvents(em, changed, new Set(unstored));
    await this.webhooks.emit(
      em,
      recordWebhookEvents(
        changed.map((b) => b.record),
        before,
        links,
      ),
    );
    return { records: changed.length, ambiguousEvents: ambiguous, appliedUnstored };
  }

  /**
   * The batch's queues with the company they are settled to as they are created, so that a
   * created queue is written once: decided by the one rule (queueCompanies) where its facts are
   * complete, unsettled (`attributedAt` null) otherwise. A queue that exists already keeps its
   * row's columns (DeliveryFacts.mergeQueues only merges its facts); the rebuild settles it.
   */
  async withSettledCompanies<Q extends QueueFacts>(
    queues: Q[],
  ): Promise<Array<Q & Pick<PostfixQueue, 'companyId' | 'attributedAt'>>> {
    const companyOf = this.companyDecider();
    const attributedAt = new Date();
    return Promise.all(
      queues.map(async (queue) =>
        settles(queue)
          ? { ...queue, companyId: (await companyOf(queue))?.id ?? null, attributedAt }
          : { ...queue, companyId: null, attributedAt: null },
      ),
    );
  }

  /**
   * The queues' companies (integrations.md "Who sent it"), decided by the one rule from each
   * queue's own facts and kept on the queue once they are complete: its `client=` line (the
   * identity Postfix wrote) and either its SASL username or its envelope sender. Until then the
   * records get the company the facts known so far name, and a later line may complete them;
   * afterwards a domain deleted or verified by another company, or a network moved, changes
   * nothing. The queues decided now are written with one statement per company.
   */
  private async queueCompanies(
    em: EntityManager,
    queues: PostfixQueue[],
  ): Promise<Map<PostfixQueue, RecordCompany | null>> {
    const companies = new Map<PostfixQueue, RecordCompany | null>();
    const decided = new Map<number | null, number[]>();
    const companyOf = this.companyDecider();
    const kept = new Map<number, Promise<RecordCompany | null>>();
    for (const queue of queues) {
      if (queue.attributedAt != null) {
        const id = queue.companyId;
        if (id !== null && !kept.has(id)) kept.set(id, this.attribution.companyById(id).then(recordCompany));
        companies.set(queue, id === null ? null : await kept.get(id)!);
        continue;
      }
      const company = await companyOf(queue);
      companies.set(queue, company);
      if (settles(queue)) appendTo(decided, company?.id ?? null, queue.id);
    }
    await this.facts.keepCompanies(em, decided);
    return companies;
  }

  /** The one rule's company for a queue's facts; a batch's queues mostly share them, so each set is asked once. */
  private companyDecider(): (queue: QueueIdentity) => Promise<RecordCompany | null> {
    const answers = new Map<string, Promise<RecordCompany | null>>();
    return (queue) => {
      const key = JSON.stringify([queue.saslUsername, queue.clientIp, queue.sender]);
      let answer = answers.get(key);
      if (!answer) {
        answer = this.attribution
          .companyOf({
            relayUsername: queue.saslUsername,
            clientAddress: queue.clientIp,
            sender: queue.sender,
          })
          .then(recordCompany);
        answers.set(key, answer);
      }
      return answer;
    };
  }

  /**
   * The provider events that name their message by Message-ID alone (the provider gave no id of
   * its own) where that Message-ID and recipient belong to records of more than one company: a
   * Message-ID is the sender's choice and another company may reuse it, so such an event is kept
   * unapplied (resources.md "Clean log").
   */
  private async ambiguousEvents(
    em: EntityManager,
    events: StoredProviderEvent[],
    built: CleanRecord[],
  ): Promise<Set<string>> {
    const byMessageId = events.filter((e) => e.recordId === null && !e.providerMessageId && e.messageId);
    if (!byMessageId.length) return new Set();
    const pairKey = (recipient: string, messageId: string) => `${recipient}\n${messageId}`;
    const owners = new Map<string, Map<string, number | null>>();
    const own = (recipient: string, messageId: string | null, recordId: string, companyId: number | null) => {
      if (!messageId) return;
      const key = pairKey(recipient, messageId);
      let records = owners.get(key);
      if (!records) owners.set(key, (records = new Map<string, number | null>()));
      records.set(recordId, companyId);
    };
    const located = await this.index.locate(
      byMessageId.map((e) => ({ recipient: e.recipient, messageId: e.messageId! })),
      em,
    );
    for (const r of located) own(r.recipient, r.messageId, r.id, r.companyId);
    for (const r of built) own(r.to, r.messageId, r.id, r.companyId);
    return new Set(
      byMessageId
        .filter((e) => new Set(owners.get(pairKey(e.recipient, e.messageId!))?.values()).size > 1)
        .map((e) => e.eventKey),
    );
  }

  /**
   * Gives up to `limit` records built before deliverability.md their provider and bounce class,
   * and their cells of the deliverability roll-up; answers how many. Their queues are locked
   * first, as a rebuild locks them, and the records read again under that lock: a rebuild of the
   * same records either went first (they are classified and passed over) or waits.
   */
  async classifyBuiltBefore(em: EntityManager, limit: number): Promise<number> {
    const found = await this.index.unclassified(limit, em);
    if (!found.length) return 0;
    await this.facts.lockedQueues(
      em,
      found.flatMap((r) => (r.queueId === null ? [] : [{ host: r.host, queueId: r.queueId }])),
    );
    const stale = (
      await this.index.getMany(
        found.map((r) => r.id),
        em,
      )
    ).filter((r) => r.provider === null);
    const classified = stale.map((r) => ({ ...r, ...deliverabilityOf(r) }));
    await this.index.write(classified, stale, em);
    await this.deliverability.move(em, classified, new Map(stale.map((r) => [r.id, r])));
    return classified.length;
  }

  /** The records provider events belong to, for the webhook: to rebuild. */
  async recordsOfEvents(
    keys: Array<{ recipient: string; messageId?: string; remoteQueueId?: string }>,
  ): Promise<RebuildTargets> {
    const targets = new RebuildTargets();
    for (const r of await this.index.locate(keys)) {
      if (r.queueId) targets.recipient({ host: r.host, queueId: r.queueId }, r.recipient);
    }
    return targets;
  }

  /**
   * +1 for each record that reached a counted status with a known company, once per record ever.
   * On the SQL index a record is written in the transaction that counts it, so a stored record
   * with a counted status and a company shows it was counted, and a record not stored yet was not
   * (`before` is read under its queue's lock): such a record is counted without a row of
   * `quota_counted_records`. That table keeps what a record's own row cannot show: that it was
   * counted once its state no longer says so (a later line made it `rejected`, or gave it no
   * company), and the counts of records whose stored state is not proof. Elasticsearch may hold
   * a record whose transaction then failed: there every record is offered to the table, which
   * keeps the count once.
   */
  private async countUsage(
    em: EntityManager,
    records: CleanRecord[],
    before: Map<string, CleanRecord>,
  ): Promise<void> {
    const sql = this.index.kind === 'sql';
    const countedAt = new Date();
    const counted: CleanRecord[] = [];
    const offered: CleanRecord[] = [];
    const stillCounted: Array<{ recordId: string; companyId: number; countedAt: Date }> = [];
    for (const r of records) {
      const stored = sql ? before.get(r.id) : undefined;
      if (stored && showsCounted(stored)) {
        if (!showsCounted(r)) stillCounted.push({ recordId: r.id, companyId: stored.companyId!, countedAt });
      } else if (showsCounted(r)) {
        (sql && !stored ? counted : offered).push(r);
      }
    }
    await this.dialect.insertMany(em, QuotaCountedRecord, stillCounted, 'ignore');
    const inserted = new Set(
      await this.dialect.insertNew(
        em,
        QuotaCountedRecord,
        offered.map((r) => ({ recordId: r.id, companyId: r.companyId!, countedAt })),
        'recordId',
      ),
    );
    counted.push(...offered.filter((r) => inserted.has(r.id)));
    const usage = new Map<number, { companyId: number; count: number; at: Date }>();
    for (const r of counted) {
      const u = usage.get(r.companyId!) ?? { companyId: r.companyId!, count: 0, at: r.lastEventAt };
      u.count += 1;
      if (r.lastEventAt > u.at) u.at = r.lastEventAt;
      usage.set(r.companyId!, u);
    }
    await this.transactions.beforeCommit(em, () => this.companyState.recordUsages([...usage.values()], em));
  }

  /**
   * A record that Postfix's log has just made a hard bounce (deliverability.md: the recipient is
   * the problem) suppresses its recipient for its company (`source: log`); a block (the sender
   * is) never does.
   */
  private async suppressHardBounces(
    em: EntityManager,
    changed: Array<{ record: CleanRecord; matched: StoredProviderEvent[] }>,
    before: Map<string, CleanRecord>,
  ): Promise<void> {
    const entries: NewSuppression[] = [];
    for (const { record: r, matched } of changed) {
      if (r.companyId === null || r.status !== 'bounced' || before.get(r.id)?.status === 'bounced') continue;
      // A provider's bounce suppresses as the provider's (applyProviderEvents), not as the log's.
      if (matched.some((e) => e.type === 'bounced')) continue;
      if (r.bounceType !== 'hard') continue;
      entries.push({ companyId: r.companyId, email: r.to, reason: 'hard_bounce', source: 'log' });
    }
    await this.suppression.addEach(em, entries);
  }

  /**
   * Marks the matched provider events applied (the stored ones here; the `unstored` ones are
   * answered, event key to record id, for the caller to store so); the first time, a hard bounce,
   * complaint or unsubscribe suppresses.
   */
  private async applyProviderEvents(
    em: EntityManager,
    changed: Array<{ record: CleanRecord; matched: StoredProviderEvent[] }>,
    unstored: ReadonlySet<StoredProviderEvent>,
  ): Promise<Map<string, string>> {
    const appliedUnstored = new Map<string, string>();
    const pairs = changed.flatMap(({ record, matched }) =>
      matched
        .filter((e) => e.recordId === null)
        .map((e) => ({ eventId: e.id, recordId: record.id, record, e })),
    );
    if (!pairs.length) return appliedUnstored;
    for (const { e, recordId } of pairs) if (unstored.has(e)) appliedUnstored.set(e.eventKey, recordId);
    await this.facts.attachEvents(
      em,
      pairs.filter((p) => !unstored.has(p.e)),
    );
    const entries: NewSuppression[] = [];
    for (const { record, e } of pairs) {
      if (record.companyId === null) continue;
      const reason =
        e.type === 'complained'
          ? 'complaint'
          : e.type === 'unsubscribed'
            ? 'unsubscribe'
            : e.type === 'bounced' && providerEventBounce(e.bounceKind, e.dsn, e.reason).type === 'hard'
              ? 'hard_bounce'
              : null;
      if (!reason) continue;
      entries.push({
        companyId: record.companyId,
        email: record.to,
        reason,
        source: 'mail_provider',
        detail: e.reason?.slice(0, 500) ?? null,
      });
    }
    await this.suppression.addEach(em, entries);
    return appliedUnstored;
  }
}

/**
 * The events of each record, in the order given: an event already applied belongs to its record
 * (`recordId`), another to the records it matches by key (recordMatchKeys; resources.md "Clean
 * log": always with the recipient; on the provider's own message id against remoteQueueId, and on
 * the Message-ID header only when the provider gave no id of its own). Indexed once, so a provider
 * batch's hundred events and records cost a lookup each, not one comparison per pair.
 */
function eventsByRecord(events: StoredProviderEvent[]): (record: CleanRecord) => StoredProviderEvent[] {
  const byRecordId = new Map<string, number[]>();
  const byKey = new Map<string, number[]>();
  events.forEach((event, at) =>
    event.recordId !== null
      ? appendTo(byRecordId, event.recordId, at)
      : appendTo(byKey, eventMatchKey(event), at),
  );
  return (record) => {
    const found = [
      ...(byRecordId.get(record.id) ?? []),
      ...recordMatchKeys(record).flatMap((key) => byKey.get(key) ?? []),
    ];
    return found.sort((a, b) => a - b).map((at) => events[at]);
  };
}

/** A record that counts against its company's quota: a counted status, and a company. */
function showsCounted(record: CleanRecord): boolean {
  return record.companyId !== null && COUNTED_STATUSES.has(record.status);
}

/** What a queue's company is decided from: the identity Postfix wrote and the envelope sender. */
type QueueIdentity = Pick<PostfixQueue, 'saslUsername' | 'clientIp' | 'sender'>;

/**
 * A queue's company is settled once its facts are complete: its `client=` line, and either its
 * SASL username or its envelope sender (queueCompanies).
 */
function settles(queue: QueueIdentity): boolean {
  return queue.clientIp !== null && (queue.saslUsername !== null || queue.sender !== null);
}

function recordCompany(company: { id: number; uuid: string } | null): RecordCompany | null {
  return company && { id: company.id, uuid: company.uuid };
}
