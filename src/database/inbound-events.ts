import { HttpStatus, Logger } from '@nestjs/common';
import {
  Brackets,
  Column,
  CreateDateColumn,
  EntityManager,
  PrimaryGeneratedColumn,
  Repository,
} from 'typeorm';
import { DomainError } from '../common/errors/domain-error';
import { DATETIME } from './column-types';
import { isUniqueViolation } from './database-errors';
import type { SqlDialect } from './sql-dialect';

/**
 * The columns every table of inbound events has (payment callbacks, log batches, mail-provider
 * events). An entity extends this class and adds what its sender tells it.
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

/**
 * Stored, but applying it failed: 503 so the sender retries (quality.md: the caller gets 200 only
 * once it is stored, and the retry job applies what is unapplied). The sender's copy is then a
 * no-op or applies it, whichever comes first. The one answer of every inbound route for this.
 */
export class InboundEventNotApplied extends DomainError {
  constructor(what: string, cause: unknown) {
    super(HttpStatus.SERVICE_UNAVAILABLE, `${what} stored but not applied yet; retry later`);
    this.cause = cause;
  }
}

/** Applies events stored together; records their outcomes (`recordOutcomes`) in its transaction. */
export type ApplyMany<E extends InboundEvent> = (events: E[]) => Promise<void>;

/** An unapplied event younger than this, never failed, is still being applied by the request that stored it. */
const IN_FLIGHT_MS = 30_000;
const RETRY_BATCH = 50;
/** Events applied together per retry when they are applied in batches (mail-provider events). */
const RETRY_MANY_BATCH = 500;
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
    /** What the sender sends, for the 503's message: "Log batch", "Payment callback", … */
    private readonly what: string,
    private readonly dialect?: SqlDialect,
  ) {
    this.logger = new Logger(`InboundEventInbox(${what})`);
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
    const due = await this.dueQuery().take(RETRY_BATCH).getMany();
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

  /**
   * `receive` for events that come many at a time and are applied together (a webhook's batch):
   * stores those not stored yet (deduplicated on their key, without reading first), then applies
   * them with the stored copies still unapplied that no request is applying. Answers the events
   * this call applied; a failure to apply records it on each and throws InboundEventNotApplied.
   */
  async receiveMany(events: E[], apply: ApplyMany<E>): Promise<E[]> {
    if (!events.length) return [];
    if (!this.dialect) throw new Error('receiveMany needs the SqlDialect');
    const inserted = new Set(
      await this.dialect.insertNew(this.events.manager, this.events.target, events, 'eventKey'),
    );
    const copies = events.filter((e) => !inserted.has(e.eventKey)).map((e) => e.eventKey);
    const unappliedCopies = copies.length
      ? (
          await this.events
            .createQueryBuilder('event')
            .where('event.event_key IN (:...keys) AND event.outcome IS NULL', { keys: copies })
            .getMany()
        ).filter(isRetryable)
      : [];
    const due = [...events.filter((e) => inserted.has(e.eventKey)), ...unappliedCopies];
    if (!due.length) return [];
    try {
      await apply(due);
    } catch (e) {
      await this.recordFailureMany(due, e);
      throw new InboundEventNotApplied(this.what, e);
    }
    return due;
  }

  /** `retryUnapplied` for events applied together: one bounded batch of the due ones. */
  async retryUnappliedMany(apply: ApplyMany<E>): Promise<number> {
    const due = await this.dueQuery().take(RETRY_MANY_BATCH).getMany();
    if (!due.length) return 0;
    try {
      await apply(due);
    } catch (e) {
      await this.recordFailureMany(due, e);
      return 0;
    }
    return due.length;
  }

  /**
   * Records what applying did to each of a batch of events, in the applying transaction: one
   * statement per outcome. As for one event, only `applied` overwrites an outcome already written.
   */
  async recordOutcomes(em: EntityManager, outcomes: Array<{ event: E; outcome: string }>): Promise<void> {
    const byOutcome = new Map<string, string[]>();
    for (const { event, outcome } of outcomes) {
      byOutcome.set(outcome, [...(byOutcome.get(outcome) ?? []), event.eventKey]);
    }
    for (const [outcome, keys] of byOutcome) {
      for (let i = 0; i < keys.length; i += RETRY_MANY_BATCH) {
        const qb = em
          .getRepository<E>(this.events.target)
          .createQueryBuilder()
          .update()
          .set({ outcome, appliedAt: new Date(), lastError: null, attempts: () => 'attempts + 1' } as never)
          .where('event_key IN (:...keys)', { keys: keys.slice(i, i + RETRY_MANY_BATCH) });
        if (outcome !== 'applied') qb.andWhere('outcome IS NULL');
        await qb.execute();
      }
    }
  }

  private dueQuery() {
    const cutoff = new Date(Date.now() - IN_FLIGHT_MS);
    return this.events
      .createQueryBuilder('event')
      .where('event.outcome IS NULL')
      .andWhere(
        new Brackets((w) => {
          w.where('event.last_error IS NOT NULL').orWhere('event.created_at < :cutoff', { cutoff });
        }),
      )
      .orderBy('event.id', 'ASC');
  }

  private async recordFailureMany(events: E[], error: unknown): Promise<void> {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    this.logger.error({ err: error, events: events.length }, 'Inbound events could not be applied');
    const keys = events.map((e) => e.eventKey);
    try {
      for (let i = 0; i < keys.length; i += RETRY_MANY_BATCH) {
        await this.events
          .createQueryBuilder()
          .update()
          .set({ lastError: message.slice(0, MAX_ERROR), attempts: () => 'attempts + 1' } as never)
          .where('event_key IN (:...keys) AND outcome IS NULL', { keys: keys.slice(i, i + RETRY_MANY_BATCH) })
          .execute();
      }
    } catch (e) {
      this.logger.error({ err: e }, 'Could not record the failed inbound events');
    }
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
      throw new InboundEventNotApplied(this.what, e);
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
