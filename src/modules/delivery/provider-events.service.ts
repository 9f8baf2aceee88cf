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
 * stored once each (deduped on the provider's event id, else a hash of the raw event), then
 * applied together (a unit of bulk work per transaction) through the clean-record rebuild, which matches them to
 * their record and suppresses hard bounces, complaints and unsubscribes. An event whose message
 * is not known yet is `waiting`, an ordinary state: the rebuild applies it when the log lines
 * arrive. Applying that fails answers 503 (stored, not applied); the sender's retry or the
 * retry job applies it.
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

    let ambiguous = 0;
    const applied = await this.inbox.receiveMany(
      [...unique].map(([key, e]) => toRow(key, e)),
      async (em, events) => {
        ambiguous += await this.apply(em, events);
      },
    );
    for (const event of applied) providerEvents.inc({ type: event.type });
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
      await this.apply(em, events);
    });
  }

  /**
   * Rebuilds the records these events belong to, which matches and applies them (see
   * DeliveryRecordsService, which marks those it matched `applied`); the events whose Message-ID
   * names records of more than one company are `ambiguous`, the others stay `waiting` for their
   * message. An event is looked for by the provider's own message id, by its Message-ID only
   * when it has none. Answers how many are ambiguous. Runs in the inbox's row-locking
   * transaction: it locks queue rows as log batches do.
   */
  private async apply(em: EntityManager, events: ProviderEvent[]): Promise<number> {
    const targets = await this.records.recordsOfEvents(
      events.map((e) => ({
        recipient: e.recipient,
        ...(e.providerMessageId
          ? { remoteQueueId: e.providerMessageId }
          : e.messageId && { messageId: e.messageId }),
      })),
    );
    const { ambiguousEvents } = await this.records.rebuild(em, targets, []);
    const ambiguous = events.filter((e) => ambiguousEvents.has(e.eventKey));
    await this.inbox.setOutcome(em, ambiguous, 'ambiguous');
    return ambiguous.length;
  }
}

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
