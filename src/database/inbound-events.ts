import { Logger } from '@nestjs/common';
import {
  Brackets,
  Column,
  CreateDateColumn,
  EntityManager,
  PrimaryGeneratedColumn,
  Repository,
} from 'typeorm';
import { DATETIME } from './column-types';
import { isUniqueViolation } from './database-errors';

/**
 * The columns every table of inbound events has (payment callbacks today; mail-provider events
 * and log batches next). An entity extends this class and adds what its sender tells it.
 */
export abstract class InboundEvent {
  @PrimaryGeneratedColumn()
  id: number;

  /** What makes two deliveries the same event (e.g. invoice id + status): unique. */
  @Column({ type: 'varchar', length: 200, unique: true })
  eventKey: string;

  /** The sender's delivery id when it sends one: a repeated one is a copy too. */
  @Column({ type: 'varchar', length: 200, nullable: true, unique: true })
  webhookId: string | null;

  /** The body as it came. */
  @Column({ type: 'text' })
  raw: string;

  /** Null until the event has been applied: what the retry job looks for. */
  @Column({ type: 'varchar', length: 16, nullable: true })
  outcome: string | null;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  @Column({ type: 'varchar', length: 1000, nullable: true })
  lastError: string | null;

  @Column({ type: DATETIME, nullable: true })
  appliedAt: Date | null;

  @CreateDateColumn({ type: DATETIME })
  createdAt: Date;
}

/**
 * What applying an event did. `outcome: 'applied'` means it changed state: only that result may
 * overwrite a record another copy already wrote; other outcomes (duplicate, ignored, …) only
 * fill a row that is still unapplied. `record` holds more columns to store with the outcome.
 */
export interface Applied<E extends InboundEvent> {
  outcome: string;
  record?: Partial<Omit<E, keyof InboundEvent>>;
  /** The outcome was written in the applying transaction (`recordApplied`): nothing left to record. */
  recorded?: boolean;
}

export type Apply<E extends InboundEvent> = (event: E) => Promise<Applied<E>>;

/** The result of receiving one delivery: applied now, or a copy of an event already applied. */
export type Received<E extends InboundEvent> =
  { kind: 'applied'; event: E; applied: Applied<E> } | { kind: 'duplicate'; event: E | null };

/** Stored, but applying it failed: the caller answers so that the sender retries (the job will too). */
export class InboundEventNotApplied extends Error {
  constructor(cause: unknown) {
    super('Inbound event stored but not applied', { cause });
  }
}

/** An unapplied event younger than this, never failed, is still being applied by the request that stored it. */
const IN_FLIGHT_MS = 30_000;
const RETRY_BATCH = 50;
const MAX_ERROR = 1000;

/**
 * The one pattern for what outside systems send (a webhook, a log batch): store the raw event
 * first, dedupe on its key (a copy is a no-op), apply it, record the outcome on its row, and let
 * a job apply again what failed or was left behind by a crash. Nothing is lost (the row exists
 * before any work) and nothing counted twice (the unique key, and `apply` must be idempotent
 * against its own state: a retried event may find its work already done).
 */
export class InboundEventInbox<E extends InboundEvent> {
  private readonly logger: Logger;

  constructor(
    private readonly events: Repository<E>,
    name: string,
  ) {
    this.logger = new Logger(name);
  }

  /** Stores `event` (its id is set on success), then applies it; a failure to apply throws InboundEventNotApplied. */
  async receive(event: E, apply: Apply<E>): Promise<Received<E>> {
    try {
      await this.events.insert(event as never);
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      const existing = await this.findCopy(event);
      if (existing && existing.outcome === null && isRetryable(existing)) {
        return { kind: 'applied', event: existing, applied: await this.applyOrFail(existing, apply) };
      }
      return { kind: 'duplicate', event: existing };
    }
    return { kind: 'applied', event, applied: await this.applyOrFail(event, apply) };
  }

  /** For the retry job: applies unapplied events that no request is applying, oldest first, a bounded batch. */
  async retryUnapplied(apply: Apply<E>): Promise<number> {
    const cutoff = new Date(Date.now() - IN_FLIGHT_MS);
    const due = await this.events
      .createQueryBuilder('event')
      .where('event.outcome IS NULL')
      .andWhere(
        new Brackets((w) => {
          w.where('event.last_error IS NOT NULL').orWhere('event.created_at < :cutoff', { cutoff });
        }),
      )
      .orderBy('event.id', 'ASC')
      .take(RETRY_BATCH)
      .getMany();
    let applied = 0;
    for (const event of due) {
      try {
        await this.applyAndRecord(event, apply);
        applied += 1;
      } catch (e) {
        await this.recordFailure(event, e);
      }
    }
    return applied;
  }

  private findCopy(event: E): Promise<E | null> {
    const qb = this.events
      .createQueryBuilder('event')
      .where('event.event_key = :eventKey', { eventKey: event.eventKey });
    if (event.webhookId) qb.orWhere('event.webhook_id = :webhookId', { webhookId: event.webhookId });
    return qb.orderBy('event.id', 'ASC').getOne();
  }

  private async applyOrFail(event: E, apply: Apply<E>): Promise<Applied<E>> {
    try {
      return await this.applyAndRecord(event, apply);
    } catch (e) {
      await this.recordFailure(event, e);
      throw new InboundEventNotApplied(e);
    }
  }

  /**
   * Writes the outcome inside the transaction that applied the event, so applying and recording
   * commit together (one commit fewer per event than recording it afterwards).
   */
  async recordApplied(em: EntityManager, event: E, applied: Applied<E>): Promise<Applied<E>> {
    await this.outcomeUpdate(em.getRepository<E>(this.events.target), event, applied);
    return { ...applied, recorded: true };
  }

  private async applyAndRecord(event: E, apply: Apply<E>): Promise<Applied<E>> {
    const applied = await apply(event);
    if (!applied.recorded) await this.outcomeUpdate(this.events, event, applied);
    return applied;
  }

  private async outcomeUpdate(events: Repository<E>, event: E, applied: Applied<E>): Promise<void> {
    const qb = events
      .createQueryBuilder()
      .update()
      .set({
        ...applied.record,
        outcome: applied.outcome,
        appliedAt: new Date(),
        lastError: null,
        attempts: () => 'attempts + 1',
      } as never)
      .where('id = :id', { id: event.id });
    if (applied.outcome !== 'applied') qb.andWhere('outcome IS NULL');
    await qb.execute();
  }

  private async recordFailure(event: E, error: unknown): Promise<void> {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    this.logger.error({ err: error, eventId: event.id }, 'Inbound event could not be applied');
    try {
      await this.events
        .createQueryBuilder()
        .update()
        .set({ lastError: message.slice(0, MAX_ERROR), attempts: () => 'attempts + 1' } as never)
        .where('id = :id AND outcome IS NULL', { id: event.id })
        .execute();
    } catch (e) {
      // The database may be what failed; the row stays unapplied either way.
      this.logger.error({ err: e, eventId: event.id }, 'Could not record the failed inbound event');
    }
  }
}

function isRetryable(event: InboundEvent): boolean {
  return event.lastError !== null || event.createdAt.getTime() < Date.now() - IN_FLIGHT_MS;
}
