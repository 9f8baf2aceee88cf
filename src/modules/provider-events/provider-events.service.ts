import { BadRequestException, Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository } from 'typeorm';
import { SqlDialect } from '../../database/sql-dialect';
import { TransactionService } from '../../database/transaction.service';
import { DeliveryRecordsService } from '../log-ingest/delivery-records.service';
import { ProviderEventsResultDto } from './dto/provider-events.dto';
import { ProviderEvent } from './entities/provider-event.entity';
import { detectProvider, NormalisedEvent, normaliseEvents } from './normalise';

const CHUNK = 500;

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

    const accepted = await this.transactions.run(async (em) => {
      const keys = [...unique.keys()];
      const seen = new Set<string>();
      for (let i = 0; i < keys.length; i += CHUNK) {
        const rows = await em.getRepository(ProviderEvent).find({
          where: { eventKey: In(keys.slice(i, i + CHUNK)) },
          select: { eventKey: true },
        });
        for (const row of rows) seen.add(row.eventKey);
      }
      const fresh = [...unique].filter(([key]) => !seen.has(key));
      await this.dialect.insertMany(
        em,
        ProviderEvent,
        fresh.map(([key, e]) => toRow(key, e)),
        'ignore',
      );
      const queues = await this.records.queuesOfEvents(
        fresh.map(([, e]) => ({
          recipient: e.recipient,
          ...(e.messageId && { messageId: e.messageId }),
          ...(e.providerMessageId && { remoteQueueId: e.providerMessageId }),
        })),
      );
      await this.records.rebuild(em, queues, []);
      return fresh.length;
    });
    return { accepted, duplicates: batch.events.length - accepted, skipped: items - batch.events.length };
  }
}

function toRow(key: string, e: NormalisedEvent): Partial<ProviderEvent> {
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
    createdAt: new Date(),
  };
}
