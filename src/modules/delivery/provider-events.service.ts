import { BadRequestException, Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { InboundEventInbox } from '../../database/inbound-events';
import { SqlDialect } from '../../database/sql-dialect';
import { TransactionService } from '../../database/transaction.service';
import { Job } from '../jobs/job.decorator';
import { providerEvents } from '../metrics/metrics';
import { DeliveryRecordsService } from './delivery-records.service';
import { ProviderEventsResultDto } from './dto/provider-events.dto';
import { ProviderEvent } from './entities/provider-event.entity';
import { detectProvider, NormalisedEvent, normaliseEvents } from './parsing/provider-payloads';

/**
 * The mail provider's webhook on the inbound-event path (InboundEventInbox): events normalised,
 * deduped on the provider's event id (else a hash of the raw event), applied together (a unit of
 * bulk work per transaction) through the clean-record rebuild, which matches them to their
 * record and suppresses hard bounces, complaints and unsubscribes, and stored once each in the
 * same transaction with what applying found (InboundEventInbox.receiveManyStoredAfter). An event
 * whose message is not known yet is `waiting`, an ordinary state: the rebuild applies it when the
 * log lines arrive. Applying that fails answers 503 (stored, not applied); the sender's retry or
 * the retry job applies it.
 */
@Injectable()
export class ProviderEventsService {
  private readonly logger = new Logger(ProviderEventsService.name);
  private readonly inbox: InboundEventInbox<ProviderEvent>;

  constructor(
    @InjectRepository(ProviderEvent) events: Repository<ProviderEvent>,
    private readonly records: DeliveryRecordsService,
    transactions: TransactionService,
    dialect: SqlDialect,
  ) {
    this.inbox = new InboundEventInbox(events, 'Mail-provider events', {
      transactions,
      dialect,
      presumed: 'waiting',
    });
  }

  async receive(body: unknown): Promise<ProviderEventsResultDto> {
    const provider = detectProvider(body);
    if (!provider) {
      throw new BadRequestException('Not a Postmark, SendGrid or SparkPost event payload');
    }
    const items = Array.isArray(body) ? body.length : 1;
    const batch = normaliseEvents(body);
    for (const bad of batch.bad) {
      this.logger.warn({ provider, index: bad.index, reason: bad.reason }, 'Mail-provider event skipped');
    }
    const unique = new Map<string, NormalisedEvent>();
    for (const event of batch.events) unique.set(event.providerEventId.slice(0, 200), event);

    const ambiguousKeys = new Set<string>();
    const applied = await this.inbox.receiveManyStoredAfter(
      [...unique].map(([key, e]) => toRow(key, e)),
      async (em, fresh, copies) => {
        const { ambiguous, columns } = await this.apply(em, fresh, copies);
        for (const key of ambiguous) ambiguousKeys.add(key);
        return columns;
      },
    );
    for (const event of applied) providerEvents.inc({ type: event.type });
    const ambiguous = applied.filter((e) => ambiguousKeys.has(e.eventKey)).length;
    return {
      accepted: applied.length - ambiguous,
      duplicates: batch.events.length - applied.length,
      skipped: items - batch.events.length + ambiguous,
    };
  }

  /** `retry-callbacks`: applies again the events left unapplied (a failure, a crash), a bounded batch. */
  @Job('retry-callbacks', { shared: true })
  retryUnapplied(): Promise<number> {
    return this.inbox.retryUnappliedMany(async (em, events) => {
      await this.apply(em, [], events);
    });
  }

  /**
   * Rebuilds the records these events belong to, which matches and applies them (see
   * DeliveryRecordsService): `fresh` events, not stored yet, are answered with the columns to
   * store them with (their record and `applied`, or `ambiguous`); stored `copies` (the retry
   * job's) are marked there. The events whose Message-ID names records of more than one company
   * are `ambiguous`, the others stay `waiting` for their message. An event is looked for by the
   * provider's own message id, by its Message-ID only when it has none. Runs in the inbox's
   * row-locking transaction: it locks queue rows as log batches do.
   */
  private async apply(
    em: EntityManager,
    fresh: ProviderEvent[],
    copies: ProviderEvent[],
  ): Promise<{ ambiguous: Set<string>; columns: Map<string, Partial<ProviderEvent>> }> {
    const targets = await this.records.recordsOfEvents(
      [...fresh, ...copies].map((e) => ({
        recipient: e.recipient,
        ...(e.providerMessageId
          ? { remoteQueueId: e.providerMessageId }
          : e.messageId && { messageId: e.messageId }),
      })),
    );
    // Ids above every stored one, in the order the insert gives them theirs.
    const unstored = fresh.map((e, at) => ({ ...e, id: UNSTORED_IDS + at }));
    const { ambiguousEvents, appliedUnstored } = await this.records.rebuild(
      em,
      targets,
      [],
      new Map(),
      unstored,
    );
    await this.inbox.setOutcome(
      em,
      copies.filter((e) => ambiguousEvents.has(e.eventKey)),
      'ambiguous',
    );
    const appliedAt = new Date();
    const columns = new Map<string, Partial<ProviderEvent>>();
    for (const { eventKey } of fresh) {
      const recordId = appliedUnstored.get(eventKey);
      if (recordId) columns.set(eventKey, { recordId, outcome: 'applied', appliedAt });
      else if (ambiguousEvents.has(eventKey)) columns.set(eventKey, { outcome: 'ambiguous', appliedAt });
    }
    return { ambiguous: ambiguousEvents, columns };
  }
}

/** Above any id the table's serial column gives (a 32-bit integer). */
const UNSTORED_IDS = 2 ** 31;

function toRow(key: string, e: NormalisedEvent): ProviderEvent {
  return {
    eventKey: key,
    webhookId: null,
    provider: e.provider,
    type: e.type,
    recipient: e.recipient.slice(0, 320),
    messageId: e.messageId?.slice(0, 500) ?? null,
    providerMessageId: e.providerMessageId?.slice(0, 200) ?? null,
    at: e.at,
    bounceKind: e.bounceKind ?? null,
    dsn: e.dsn?.slice(0, 16) ?? null,
    reason: e.reason?.slice(0, 1000) ?? null,
    raw: JSON.stringify(e.raw),
    recordId: null,
    outcome: null,
    attempts: 0,
    lastError: null,
    appliedAt: null,
    createdAt: new Date(),
  } as ProviderEvent;
}
