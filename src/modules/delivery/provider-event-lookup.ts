import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, In, Repository } from 'typeorm';
import { ProviderEvent } from './entities/provider-event.entity';

/** A stored provider event as the clean-record rebuild reads it. */
export interface StoredProviderEvent {
  id: number;
  eventKey: string;
  type: string;
  recipient: string;
  messageId: string | null;
  providerMessageId: string | null;
  recordId: string | null;
  at: Date;
  bounceKind: string | null;
  dsn: string | null;
  reason: string | null;
}

const CHUNK = 500;

/**
 * The provider events as the clean-record rebuild reads them: those of some recipients, applied
 * or still waiting for their message, and marking them applied.
 */
@Injectable()
export class ProviderEventLookup {
  constructor(@InjectRepository(ProviderEvent) private readonly events: Repository<ProviderEvent>) {}

  async ofRecipients(recipients: string[], within?: EntityManager): Promise<StoredProviderEvent[]> {
    const repo = within ? within.getRepository(ProviderEvent) : this.events;
    const unique = [...new Set(recipients)];
    const found: StoredProviderEvent[] = [];
    for (let i = 0; i < unique.length; i += CHUNK) {
      found.push(
        ...(await repo.find({
          where: { recipient: In(unique.slice(i, i + CHUNK)) },
          select: {
            id: true,
            eventKey: true,
            type: true,
            recipient: true,
            messageId: true,
            providerMessageId: true,
            recordId: true,
            at: true,
            bounceKind: true,
            dsn: true,
            reason: true,
          },
          order: { id: 'ASC' },
        })),
      );
    }
    return found;
  }

  /**
   * Marks events applied to their record, in one statement. The caller holds the lock of the
   * records' queues and read the events after taking it, so these are still unapplied.
   */
  async attach(pairs: Array<{ eventId: number; recordId: string }>, within: EntityManager): Promise<void> {
    for (let i = 0; i < pairs.length; i += CHUNK) {
      const chunk = pairs.slice(i, i + CHUNK);
      const params: Record<string, unknown> = {};
      const cases = chunk
        .map((p, n) => {
          params[`e${n}`] = p.eventId;
          params[`r${n}`] = p.recordId;
          return `WHEN :e${n} THEN :r${n}`;
        })
        .join(' ');
      await within
        .createQueryBuilder()
        .update(ProviderEvent)
        .set({ recordId: () => `CASE id ${cases} END` })
        .where('id IN (:...ids) AND record_id IS NULL', { ids: chunk.map((p) => p.eventId) })
        .setParameters(params)
        .execute();
    }
  }
}
