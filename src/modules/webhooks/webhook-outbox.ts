import { Injectable } from '@nestjs/common';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { EntityManager, In } from 'typeorm';
import { ChangeEvents } from '../../common/events/change-events';
import { ChangeNotices } from '../../database/change-notices';
import { chunks } from '../../database/chunks';
import { SqlDialect } from '../../database/sql-dialect';
import { TransactionService } from '../../database/transaction.service';
import { WebhookDelivery } from './entities/webhook-delivery.entity';
import { WebhookEvent } from './entities/webhook-event.entity';
import { Webhook } from './entities/webhook.entity';
import { endpointWants, WebhookEventType } from './webhook-event-types';

/** What a change tells the outbox: one event of one company. */
export interface NewWebhookEvent {
  companyId: number;
  type: WebhookEventType;
  /** The event's `data` (`companyUuid` is added). */
  data: Record<string, unknown>;
  /** The sender domain of a mail event: endpoints may ask for some domains only. */
  domain?: string | null;
  /** The clean record a mail event is about: its events are numbered (`data.seq`) and kept in order. */
  recordId?: string;
  /** Names the fact (any text): the same fact told twice makes one event. */
  fact?: string;
}

/** Events were committed: the dispatchers (this process's and the others') look for work. */
@Injectable()
export class WebhookWork extends ChangeEvents<{ events: number }> {
  constructor(notices: ChangeNotices) {
    super(notices, 'webhook_work');
  }
}

/** `evt_` and 22 base64url characters (16 random bytes). */
export const newEventId = (): string => `evt_${randomBytes(16).toString('base64url')}`;

/**
 * Where the areas write their events (platform.md "Event types and payload"), inside the
 * transaction of the change that makes them: an event and its deliveries, one per endpoint of
 * the company that wants it, commit or roll back with the change. An event no endpoint wants is
 * not kept. A fact told twice (a log line shipped twice, a provider's retry) has the same key and
 * makes no second event. Once committed, the dispatchers are woken.
 */
@Injectable()
export class WebhookOutbox {
  constructor(
    private readonly dialect: SqlDialect,
    private readonly transactions: TransactionService,
    private readonly work: WebhookWork,
  ) {}

  /** Writes the events (with their deliveries) in `em`'s transaction; answers how many were new. */
  async emit(em: EntityManager, events: readonly NewWebhookEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    const companyIds = [...new Set(events.map((e) => e.companyId))];
    const endpoints = await em.find(Webhook, {
      where: { companyId: In(companyIds), enabled: true },
      select: { id: true, companyId: true, events: true, domains: true },
    });
    if (endpoints.length === 0) return 0;
    const companyUuids = await this.companyUuids(em, [...new Set(endpoints.map((w) => w.companyId))]);

    const now = new Date();
    const addressed = events
      .map((e) => ({
        e,
        receivers: endpoints
          .filter((w) => w.companyId === e.companyId && endpointWants(w, e.type, e.domain ?? null))
          .map((w) => w.id),
      }))
      .filter((a) => a.receivers.length > 0);
    const nextSeq = await this.nextSeqs(em, [
      ...new Set(addressed.flatMap((a) => (a.e.recordId === undefined ? [] : [a.e.recordId]))),
    ]);
    const wanted: Array<{ event: Partial<WebhookEvent>; for: number[] }> = [];
    for (const { e, receivers } of addressed) {
      const eventId = newEventId();
      let seq: number | null = null;
      if (e.recordId !== undefined) {
        seq = nextSeq.get(e.recordId) ?? 1;
        nextSeq.set(e.recordId, seq + 1);
      }
      const payload = JSON.stringify({
        type: e.type,
        timestamp: now.toISOString(),
        data: { companyUuid: companyUuids.get(e.companyId), ...e.data, ...(seq !== null && { seq }) },
      });
      wanted.push({
        event: {
          eventId,
          companyId: e.companyId,
          type: e.type,
          payload,
          recordId: e.recordId ?? null,
          seq,
          factKey: e.fact === undefined ? null : createHash('sha256').update(e.fact).digest('hex'),
          createdAt: now,
        },
        for: receivers,
      });
    }
    if (wanted.length === 0) return 0;

    const inserted = new Set(
      await this.dialect.insertNew(
        em,
        WebhookEvent,
        wanted.map((w) => w.event),
        'eventId',
      ),
    );
    const fresh = wanted.filter((w) => inserted.has(w.event.eventId!));
    if (fresh.length === 0) return 0;
    const ids = new Map(
      (
        await em.find(WebhookEvent, {
          where: { eventId: In(fresh.map((w) => w.event.eventId!)) },
          select: { id: true, eventId: true },
        })
      ).map((row) => [row.eventId, row.id]),
    );
    const deliveries = fresh.flatMap((w) =>
      w.for.map((webhookId): Partial<WebhookDelivery> => ({
        uuid: randomUUID(),
        webhookId,
        eventId: ids.get(w.event.eventId!)!,
        type: w.event.type!,
        recordId: w.event.recordId ?? null,
        seq: w.event.seq ?? null,
        status: 'pending',
        attempts: 0,
        nextAttemptAt: now,
        createdAt: now,
        updatedAt: now,
      })),
    );
    await this.dialect.insertMany(em, WebhookDelivery, deliveries, 'ignore');
    this.transactions.afterCommit(em, () => this.work.emit({ events: fresh.length }));
    return fresh.length;
  }

  /** The public ids of the companies, for the events' `data.companyUuid`. */
  private async companyUuids(em: EntityManager, ids: number[]): Promise<Map<number, string>> {
    const rows: Array<{ id: number | string; uuid: string }> = await em
      .createQueryBuilder()
      .select(['c.id AS id', 'c.uuid AS uuid'])
      .from('companies', 'c')
      .where('c.id IN (:...ids)', { ids })
      .getRawMany();
    return new Map(rows.map((row) => [Number(row.id), row.uuid]));
  }

  /** The next `seq` of each record that has events already (a record without any starts at 1). */
  private async nextSeqs(em: EntityManager, recordIds: string[]): Promise<Map<string, number>> {
    const next = new Map<string, number>();
    for (const part of chunks(recordIds)) {
      const rows = await em
        .createQueryBuilder(WebhookEvent, 'e')
        .select('e.recordId', 'recordId')
        .addSelect('MAX(e.seq)', 'seq')
        .where({ recordId: In(part) })
        .groupBy('e.recordId')
        .getRawMany<{ recordId: string; seq: number | string | null }>();
      for (const row of rows) next.set(row.recordId, Number(row.seq ?? 0) + 1);
    }
    return next;
  }
}
