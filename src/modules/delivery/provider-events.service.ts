import { BadRequestException, Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, In, IsNull, Not, Repository } from 'typeorm';
import { SqlDialect } from '../../database/sql-dialect';
import { TransactionService } from '../../database/transaction.service';
import { DeliveryRecordsService } from './delivery-records.service';
import { ProviderEventsResultDto } from './dto/provider-events.dto';
import { ProviderEvent } from './entities/provider-event.entity';
import { detectProvider, NormalisedEvent, normaliseEvents } from './parsing/provider-payloads';

const RETRY_BATCH = 500;

/**
 * The mail provider's webhook: events normalised, stored once each (deduped on the provider's
 * event id, else a hash of the raw event), and applied through the clean-record rebuild, which
 * matches them to their record and suppresses hard bounces, complaints and unsubscribes. An
 * event whose message is not known yet is kept and applied when its record arrives.
 */
@Injectable()
export class ProviderEventsService {
  private readonly logger = new Logger(ProviderEventsService.name);

  constructor(
    @InjectRepository(ProviderEvent) private readonly events: Repository<ProviderEvent>,
    private readonly transactions: TransactionService,
    private readonly dialect: SqlDialect,
    private readonly records: DeliveryRecordsService,
  ) {}

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

    // Stored and applied in one transaction; when applying fails, stored alone, marked for the
    // retry job: an event is never lost to a failure of its application. The rebuild locks queue
    // rows as log batches do: it waits for the same permit (in memory, before it holds a connection).
    let fresh: Array<Omit<ProviderEvent, 'id'>>;
    let ambiguous = new Set<string>();
    try {
      fresh = await this.transactions.runRowLocking(async (em) => {
        const rows = await this.store(em, unique);
        ambiguous = await this.apply(em, rows);
        return rows;
      });
    } catch (e) {
      this.logger.error({ err: e }, 'Mail-provider events could not be applied; stored for retry-callbacks');
      fresh = await this.transactions.run(async (em) => {
        const rows = await this.store(em, unique, errorText(e));
        return rows;
      });
    }
    // An event whose Message-ID names records of several companies is stored, not applied: skipped.
    const unapplied = fresh.filter((row) => ambiguous.has(row.eventKey)).length;
    return {
      accepted: fresh.length - unapplied,
      duplicates: batch.events.length - fresh.length,
      skipped: items - batch.events.length + unapplied,
    };
  }

  /** `retry-callbacks`: applies again the events whose application failed (a bounded batch). */
  async retryUnapplied(): Promise<number> {
    const due = await this.events.find({
      where: { applyError: Not(IsNull()), recordId: IsNull() },
      order: { id: 'ASC' },
      take: RETRY_BATCH,
    });
    if (!due.length) return 0;
    await this.transactions.runRowLocking(async (em) => {
      await this.apply(em, due);
      await em.getRepository(ProviderEvent).update({ id: In(due.map((e) => e.id)) }, { applyError: null });
    });
    return due.length;
  }

  /** Inserts the events not stored yet (deduped on their key); answers those it inserted. */
  private async store(
    em: EntityManager,
    events: Map<string, NormalisedEvent>,
    applyError: string | null = null,
  ): Promise<Array<Omit<ProviderEvent, 'id'>>> {
    const rows = [...events].map(([key, e]) => ({ ...toRow(key, e), applyError }));
    const inserted = new Set(await this.dialect.insertNew(em, ProviderEvent, rows, 'eventKey'));
    return rows.filter((row) => inserted.has(row.eventKey));
  }

  /**
   * Rebuilds the records these events belong to, which matches and applies them (see
   * DeliveryRecordsService); answers the keys of the events left unapplied as ambiguous. An event
   * is looked for by the provider's own message id, by its Message-ID only when it has none.
   */
  private async apply(
    em: EntityManager,
    events: Array<Pick<ProviderEvent, 'recipient' | 'messageId' | 'providerMessageId'>>,
  ): Promise<Set<string>> {
    if (!events.length) return new Set();
    const queues = await this.records.queuesOfEvents(
      events.map((e) => ({
        recipient: e.recipient,
        ...(e.providerMessageId
          ? { remoteQueueId: e.providerMessageId }
          : e.messageId && { messageId: e.messageId }),
      })),
    );
    return (await this.records.rebuild(em, queues, [])).ambiguousEvents;
  }
}

function errorText(e: unknown): string {
  return (e instanceof Error ? `${e.name}: ${e.message}` : String(e)).slice(0, 1000);
}

function toRow(key: string, e: NormalisedEvent): Omit<ProviderEvent, 'id'> {
  return {
    eventKey: key,
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
    applyError: null,
    createdAt: new Date(),
  };
}
