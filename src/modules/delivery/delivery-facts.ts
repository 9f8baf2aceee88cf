import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { chunks } from '../../database/chunks';
import { ListMatch, RowUpdate, SqlDialect } from '../../database/sql-dialect';
import { PostfixDelivery } from './entities/postfix-delivery.entity';
import { PostfixQueue } from './entities/postfix-queue.entity';
import { ProviderEvent } from './entities/provider-event.entity';
import { DeliveryLine, factsToAdd, QueueFacts, QueueKey, queueKey } from './parsing/queue-facts';
import type { RebuildTargets } from './rebuild-targets';

/** What the clean-record rebuild reads of a stored provider event. */
const STORED_EVENT_FIELDS = [
  'id',
  'eventKey',
  'type',
  'recipient',
  'messageId',
  'providerMessageId',
  'recordId',
  'at',
  'bounceKind',
  'dsn',
  'reason',
] as const;

/** A stored provider event as the clean-record rebuild reads it. */
export type StoredProviderEvent = Pick<ProviderEvent, (typeof STORED_EVENT_FIELDS)[number]>;

/**
 * The stored facts clean records are built from: the queues (what Postfix said of each message),
 * their delivery lines, and the provider events of their recipients. Every method runs in the
 * caller's transaction. The queue rows are read locked on PostgreSQL, in id order, so a log
 * batch and a provider event that touch the same queue apply one after the other.
 */
@Injectable()
export class DeliveryFacts {
  constructor(private readonly dialect: SqlDialect) {}

  /** The rows of these queues, locked on PostgreSQL for the rest of the transaction. */
  async lockedQueues(em: EntityManager, keys: QueueKey[]): Promise<PostfixQueue[]> {
    // Both columns of the (host, queue_id) index: the queue id alone cannot use it. A chunk may
    // bring rows of other (host, queue id) pairs; only those asked for are answered.
    const wanted = new Set(keys.map((k) => queueKey(k.host, k.queueId)));
    const hosts = [...new Set(keys.map((k) => k.host))];
    const ids = [...new Set(keys.map((k) => k.queueId))];
    const rows: PostfixQueue[] = [];
    for (const idChunk of chunks(ids)) {
      rows.push(
        ...(await this.dialect.findIn(
          em,
          PostfixQueue,
          { in: { host: hosts, queueId: idChunk } },
          undefined,
          {
            orderBy: 'id',
            forUpdate: true,
          },
        )),
      );
    }
    return rows.filter((row) => wanted.has(queueKey(row.host, row.queueId)));
  }

  /**
   * Merges a batch's facts into the stored queues (a fact once known is kept; the earliest times
   * win). New queues are written whole, with the company settled for them
   * (DeliveryRecordsService.withSettledCompanies; the usual batch holds every line of its messages); the
   * rows that existed (or that a concurrent batch inserted first) are then read locked and what
   * they lack is merged in. Answers the queues that changed, and of them those this call created:
   * a delivery line is stored only with its queue's row, so every line of a created queue is in
   * this batch (DeliveryRecordsService.rebuild need not read them).
   */
  async mergeQueues(
    em: EntityManager,
    batch: Array<QueueFacts & Pick<PostfixQueue, 'companyId' | 'attributedAt'>>,
  ): Promise<{ touched: Map<string, QueueKey>; created: Set<string> }> {
    const touched = new Map<string, QueueKey>();
    const created = new Set<string>();
    if (!batch.length) return { touched, created };
    for (const row of await this.dialect.insertNewKeys(em, PostfixQueue, batch, ['host', 'queueId'])) {
      const key = queueKey(row.host, row.queueId);
      created.add(key);
      touched.set(key, { host: row.host, queueId: row.queueId });
    }
    const known = batch.filter((f) => !created.has(queueKey(f.host, f.queueId)));
    if (!known.length) return { touched, created };
    const stored = new Map(
      (await this.lockedQueues(em, known)).map((row) => [queueKey(row.host, row.queueId), row]),
    );
    // One statement for the rows that gain the same facts (usually all of them).
    const updates = new Map<string, Array<RowUpdate<PostfixQueue>>>();
    for (const facts of known) {
      const key = queueKey(facts.host, facts.queueId);
      const row = stored.get(key);
      if (!row) continue;
      const changes = factsToAdd(row, facts);
      const gained = Object.keys(changes).sort().join();
      if (!gained) continue;
      const group = updates.get(gained) ?? updates.set(gained, []).get(gained)!;
      group.push({ match: { id: row.id }, set: changes });
      touched.set(key, { host: row.host, queueId: row.queueId });
    }
    for (const group of updates.values()) await this.dialect.updateEach(em, PostfixQueue, group, 'id');
    return { touched, created };
  }

  /**
   * Stores the delivery lines not seen before (by their key) and answers them. `ofCreatedQueues`:
   * the lines of queues this transaction created (mergeQueues), none of which can be stored yet (a
   * line is stored only with its queue's row, and a concurrent batch with lines of the same queue
   * waits for that row): stored without looking for copies, and not answered.
   */
  async insertNewDeliveries(
    em: EntityManager,
    deliveries: DeliveryLine[],
    ofCreatedQueues: DeliveryLine[] = [],
  ): Promise<DeliveryLine[]> {
    await this.dialect.insertMany(em, PostfixDelivery, ofCreatedQueues, 'none');
    const inserted = new Set(await this.dialect.insertNew(em, PostfixDelivery, deliveries, 'lineKey'));
    return deliveries.filter((d) => inserted.has(d.lineKey));
  }

  /**
   * The delivery lines of the targets: every line of a queue rebuilt whole, only its recipients'
   * lines otherwise (read by recipient too, so a line for one recipient of a large queue does not
   * read the lines of all the others).
   */
  async deliveriesOf(em: EntityManager, targets: RebuildTargets): Promise<PostfixDelivery[]> {
    const whole = targets.queues.filter((q) => !targets.recipientsOf(q));
    const partial = targets.queues.filter((q) => targets.recipientsOf(q));
    const rows = await this.linesOf(em, whole);
    const recipients = [...new Set(partial.flatMap((q) => [...targets.recipientsOf(q)!]))];
    for (const chunk of chunks(recipients)) rows.push(...(await this.linesOf(em, partial, chunk)));
    // Each read spans its hosts × queue ids, so a line may come from both, or be of a pair not asked.
    const wanted = new Map<number, PostfixDelivery>();
    for (const d of rows) if (targets.wants(d)) wanted.set(d.id, d);
    return [...wanted.values()];
  }

  /** The lines of these queues, of these recipients only when given. */
  private async linesOf(
    em: EntityManager,
    queues: QueueKey[],
    recipients?: string[],
  ): Promise<PostfixDelivery[]> {
    const hosts = [...new Set(queues.map((k) => k.host))];
    const ids = [...new Set(queues.map((k) => k.queueId))];
    const rows: PostfixDelivery[] = [];
    for (const idChunk of chunks(ids)) {
      rows.push(
        ...(await this.dialect.findIn(em, PostfixDelivery, {
          in: { host: hosts, queueId: idChunk, ...(recipients && { recipient: recipients }) },
        })),
      );
    }
    return rows;
  }

  /** Keeps the company decided for each of these queues (integrations.md "Who sent it"). */
  async keepCompanies(em: EntityManager, decided: Map<number | null, number[]>): Promise<void> {
    const attributedAt = new Date();
    const rows = [...decided].flatMap(([companyId, queueIds]) =>
      queueIds.map((id) => ({ match: { id }, set: { companyId, attributedAt } })),
    );
    await this.dialect.updateEach(em, PostfixQueue, rows, 'id');
  }

  /**
   * The provider events that may belong to these records, applied or still waiting for their
   * message, oldest first: those naming a record's message by the provider's id (its `queued as`),
   * and those with no such id naming it by its Message-ID, for the record's recipient. Read by
   * those keys, not by recipient: a busy recipient gathers thousands of events. `unstored`: events
   * the caller's transaction stores once they are applied (ProviderEventsService), after the
   * stored ones; one whose key is stored already (a concurrent copy that went first) is that row.
   */
  async eventsOfRecords(
    em: EntityManager,
    records: ReadonlyArray<{ to: string; remoteQueueId: string | null; messageId: string | null }>,
    unstored: readonly StoredProviderEvent[] = [],
  ): Promise<StoredProviderEvent[]> {
    const wanted = new Set(records.flatMap(recordMatchKeys));
    const remoteIds = [...new Set(records.flatMap((r) => (r.remoteQueueId ? [r.remoteQueueId] : [])))];
    const messageIds = [...new Set(records.flatMap((r) => (r.messageId ? [r.messageId] : [])))];
    const found = new Map<number, StoredProviderEvent>();
    const read = async (where: ListMatch<ProviderEvent>) => {
      for (const event of await this.dialect.findIn(em, ProviderEvent, where, STORED_EVENT_FIELDS)) {
        if (wanted.has(eventMatchKey(event))) found.set(event.id, event);
      }
    };
    for (const chunk of chunks(remoteIds)) await read({ in: { providerMessageId: chunk } });
    for (const chunk of chunks(messageIds)) {
      await read({ in: { messageId: chunk }, isNull: ['providerMessageId'] });
    }
    const storedKeys = new Set([...found.values()].map((e) => e.eventKey));
    for (const event of unstored) {
      if (wanted.has(eventMatchKey(event)) && !storedKeys.has(event.eventKey)) found.set(event.id, event);
    }
    return [...found.values()].sort((a, b) => a.id - b.id);
  }

  /**
   * Marks events applied to their record (`outcome: applied`) in one statement. The caller
   * holds the lock of the records' queues and read the events after taking it, so these are still
   * unapplied.
   */
  async attachEvents(em: EntityManager, pairs: Array<{ eventId: number; recordId: string }>): Promise<void> {
    const appliedAt = new Date();
    await this.dialect.updateEach(
      em,
      ProviderEvent,
      pairs.map((p) => ({
        match: { id: p.eventId },
        set: { recordId: p.recordId, outcome: 'applied' as const, appliedAt },
      })),
      'id',
      { isNull: ['recordId'] },
    );
  }
}

/**
 * What matches a provider event to its record until it is applied: the provider's own message id
 * (the record's `queued as`) when the event has one, else its Message-ID; with the recipient.
 */
export function eventMatchKey(
  event: Pick<StoredProviderEvent, 'providerMessageId' | 'messageId' | 'recipient'>,
): string {
  return event.providerMessageId
    ? `provider\n${event.providerMessageId}\n${event.recipient}`
    : `message\n${event.messageId}\n${event.recipient}`;
}

/** The keys a record's provider events may match it by (eventMatchKey). */
export function recordMatchKeys(record: {
  to: string;
  remoteQueueId: string | null;
  messageId: string | null;
}): string[] {
  const keys: string[] = [];
  if (record.remoteQueueId) keys.push(`provider\n${record.remoteQueueId}\n${record.to}`);
  if (record.messageId) keys.push(`message\n${record.messageId}\n${record.to}`);
  return keys;
}
