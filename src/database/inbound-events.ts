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
import { chunks, packed } from './chunks';
import { DATETIME } from './column-types';
import { isUniqueViolation } from './database-errors';
import type { ListMatch, SqlDialect } from './sql-dialect';
import type { TransactionService } from './transaction.service';

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

/** Applies events stored together, in the transaction the inbox opened (see receiveMany). */
export type ApplyMany<E extends InboundEvent> = (em: EntityManager, events: E[]) => Promise<void>;

/**
 * Applies events before they are stored, in the transaction the inbox opened (see
 * receiveManyStoredAfter): `fresh`, not stored yet, and `copies`, stored earlier and still
 * unapplied. Answers columns of the fresh events' rows, by event key, to store them with.
 */
export type ApplyThenStore<E extends InboundEvent> = (
  em: EntityManager,
  fresh: E[],
  copies: E[],
) => Promise<Map<string, Partial<E>>>;

/**
 * An event whose work comes in pieces (a log batch's lines), applied a unit of bulk work per
 * transaction (InboundEventInbox.receiveInUnits).
 */
export interface UnitsOfWork<E extends InboundEvent, P> {
  /**
   * The pieces, in groups a unit never splits (a queue's lines: its records are rebuilt from all
   * of them at once); called when they are needed (a batch waiting for its turn holds its body only).
   */
  groups(): P[][];
  /** Applies some of the pieces in the transaction `em`; idempotent. */
  applyUnit(em: EntityManager, unit: P[]): Promise<void>;
  /** Columns to store with the applied event (what applying its pieces found). */
  applied(): Partial<Omit<E, keyof InboundEvent>>;
  /** What an unapplied row holds beyond the event as given (the body an applied log batch does not keep). */
  unapplied(): Partial<E>;
}

/** What an inbox that receives events in batches needs. */
export interface BatchOptions {
  transactions: TransactionService;
  dialect: SqlDialect;
  /**
   * The outcome each event is stored with and keeps unless `apply` sets another (for mail-provider
   * events `waiting`: its message is not known yet). A batch then costs one commit and no update
   * of the events that apply leaves as they are.
   */
  presumed: string;
  /**
   * Keep the raw body of an event once it is applied (the default). False for log batches: their
   * lines live on as stored facts, and a relay's batches kept whole would grow the database by
   * their own size; the body is kept only while the event is unapplied (for the retry job).
   */
  keepAppliedRaw?: boolean;
}

/** An unapplied event younger than this, never failed, is still being applied by the request that stored it. */
const IN_FLIGHT_MS = 30_000;
const RETRY_BATCH = 50;
/** Events the retry job takes at once when they are applied together (mail-provider events). */
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
    private readonly many?: BatchOptions,
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
   * `receive` for events that come many at a time and are applied together (a webhook's batch),
   * a unit of bulk work (TransactionService.bulkUnit) per transaction, so the usual batch costs
   * one commit: the events not stored yet are inserted (deduplicated on their key, without
   * reading first) with the `presumed` outcome, and applied with the stored copies still
   * unapplied that no request is applying; `apply` overwrites the outcome of the events it
   * decides otherwise (`setOutcome`). When applying a unit fails, its events are stored alone,
   * unapplied, with the error (nothing is lost; the retry job applies them), the other units are
   * still applied, and InboundEventNotApplied is thrown; `unapplied` gives what such a row holds
   * beyond the event as given (the body an applied log batch does not keep). Answers the events
   * this call applied.
   */
  async receiveMany(events: E[], apply: ApplyMany<E>, unapplied?: () => Partial<E>): Promise<E[]> {
    return this.inUnits(events, (unit) => this.receiveUnit(unit, apply), unapplied);
  }

  /**
   * receiveMany for events whose applying decides columns of their own rows (a provider event's
   * record and outcome), stored once with them instead of inserted and then updated: in each
   * unit's transaction the stored copies are read first (by key), the other events applied before
   * they are stored, then inserted with the `presumed` outcome and the columns `apply` answered.
   * One a concurrent request stored first is skipped by the insert and not answered: `apply` must
   * find that copy's work done (it reads what is stored once it holds its locks). Failures as
   * receiveMany.
   */
  async receiveManyStoredAfter(events: E[], apply: ApplyThenStore<E>): Promise<E[]> {
    return this.inUnits(events, (unit) => this.receiveUnitStoredAfter(unit, apply));
  }

  /** Receives events a unit of bulk work per transaction (receiveMany), keeping a failed unit unapplied. */
  private async inUnits(
    events: E[],
    receiveUnit: (unit: E[]) => Promise<E[]>,
    unapplied?: () => Partial<E>,
  ): Promise<E[]> {
    const applied: E[] = [];
    let failure: unknown;
    for (const unit of chunks(events, this.batches().transactions.bulkUnit)) {
      try {
        applied.push(...(await receiveUnit(unit)));
      } catch (e) {
        failure ??= e;
        await this.storeUnapplied(unit, e, unapplied);
      }
    }
    if (failure !== undefined) throw new InboundEventNotApplied(this.what, failure);
    return applied;
  }

  /**
   * `receiveMany` for one event whose work comes in pieces (a log batch's lines). When they fit
   * one unit of bulk work it is stored and applied in one transaction; otherwise it is stored
   * first, unapplied, its pieces applied a unit per transaction, and then marked applied. A
   * failure half-way leaves it unapplied with its body, and the retry job applies it whole again
   * (`applyUnit` is idempotent, as every apply is). Answers whether this call applied it.
   */
  async receiveInUnits<P>(event: E, work: UnitsOfWork<E, P>): Promise<boolean> {
    const unit = this.batches().transactions.bulkUnit;
    // An unbounded unit needs no count: the pieces are then read once the transaction has begun.
    if (!Number.isFinite(unit) || count(work.groups()) <= unit) {
      const applied = await this.receiveMany(
        [event],
        async (em, due) => {
          await work.applyUnit(em, work.groups().flat());
          await this.setColumns(em, due, work.applied());
        },
        () => work.unapplied(),
      );
      return applied.length > 0;
    }
    const received = await this.receive({ ...event, ...work.unapplied() }, () => this.applyInUnits(work));
    return received.kind === 'applied';
  }

  /** Applies an event's pieces a unit of bulk work per transaction (see receiveInUnits); the retry job's `apply`. */
  async applyInUnits<P>(work: UnitsOfWork<E, P>): Promise<Applied<E>> {
    const { transactions, presumed } = this.batches();
    for (const unit of packed(work.groups(), transactions.bulkUnit)) {
      await transactions.runRowLocking((em) => work.applyUnit(em, unit));
    }
    return { outcome: presumed, record: work.applied() };
  }

  /** `retryUnapplied` for events applied together: one bounded batch of the due ones, a unit per transaction. */
  async retryUnappliedMany(apply: ApplyMany<E>): Promise<number> {
    const { transactions } = this.batches();
    const due = await this.dueQuery().take(RETRY_MANY_BATCH).getMany();
    let applied = 0;
    for (const unit of chunks(due, Math.min(RETRY_MANY_BATCH, transactions.bulkUnit))) {
      try {
        await transactions.runRowLocking(async (em) => {
          await apply(em, unit);
          await this.presume(em, unit);
        });
        applied += unit.length;
      } catch (e) {
        await this.recordFailureMany(unit, e);
      }
    }
    return applied;
  }

  /** One unit of receiveMany: stored and applied in one transaction. */
  private async receiveUnit(events: E[], apply: ApplyMany<E>): Promise<E[]> {
    const { transactions, dialect } = this.batches();
    const rows = this.presumedRows(events);
    return transactions.runRowLocking(async (em) => {
      const inserted = new Set(await dialect.insertNew(em, this.events.target, rows, 'eventKey'));
      const copies = retryable(
        await this.storedCopies(
          em,
          rows.filter((e) => !inserted.has(e.eventKey)),
        ),
      );
      const due = [...rows.filter((e) => inserted.has(e.eventKey)), ...copies];
      if (due.length) {
        await apply(em, due);
        await this.presume(em, copies);
      }
      return due;
    });
  }

  /** One unit of receiveManyStoredAfter: applied, then stored, in one transaction. */
  private async receiveUnitStoredAfter(events: E[], apply: ApplyThenStore<E>): Promise<E[]> {
    const { transactions, dialect } = this.batches();
    const rows = this.presumedRows(events);
    return transactions.runRowLocking(async (em) => {
      const stored = await this.storedCopies(em, rows);
      const storedKeys = new Set(stored.map((e) => e.eventKey));
      const fresh = rows.filter((e) => !storedKeys.has(e.eventKey));
      const copies = retryable(stored);
      if (!fresh.length && !copies.length) return [];
      const columns = await apply(em, fresh, copies);
      const inserted = new Set(
        await dialect.insertNew(
          em,
          this.events.target,
          fresh.map((e) => ({ ...e, ...columns.get(e.eventKey) })),
          'eventKey',
        ),
      );
      await this.presume(em, copies);
      return [...fresh.filter((e) => inserted.has(e.eventKey)), ...copies];
    });
  }

  /** Events as a unit stores them: with the `presumed` outcome, applied now, once. */
  private presumedRows(events: E[]): E[] {
    const { presumed } = this.batches();
    const appliedAt = new Date();
    return events.map((e) => ({
      ...e,
      ...this.appliedRaw(),
      outcome: presumed,
      attempts: 1,
      appliedAt,
      lastError: null,
    }));
  }

  /** A unit whose applying failed: stored alone, unapplied, with the error, for the retry job. */
  private async storeUnapplied(events: E[], error: unknown, unapplied?: () => Partial<E>): Promise<void> {
    const { dialect } = this.batches();
    const stored = events.map((event) => ({
      ...event,
      ...unapplied?.(),
      outcome: null,
      appliedAt: null,
      attempts: 0,
    }));
    await dialect.insertNew(this.events.manager, this.events.target, stored, 'eventKey');
    await this.recordFailureMany(events, error);
  }

  /** What becomes of an event's raw body once it is applied: kept, or emptied (keepAppliedRaw). */
  private appliedRaw(): { raw?: string } {
    return this.many?.keepAppliedRaw === false ? { raw: '' } : {};
  }

  /** Sets the outcome of these events, in the applying transaction (`apply` of receiveMany). */
  async setOutcome(em: EntityManager, events: E[], outcome: string): Promise<void> {
    await this.updateByKeys(em, events, { outcome, appliedAt: new Date(), lastError: null }, false);
  }

  /**
   * Gives these events more columns in the applying transaction (`apply` of receiveMany): what
   * applying them found, e.g. a log batch's record count.
   */
  async setColumns(
    em: EntityManager,
    events: E[],
    columns: Partial<Omit<E, keyof InboundEvent>>,
  ): Promise<void> {
    await this.updateByKeys(em, events, columns, false);
  }

  /** Stored events applied again: one attempt more, and the presumed outcome where `apply` set none. */
  private async presume(em: EntityManager, events: E[]): Promise<void> {
    await this.updateByKeys(
      em,
      events,
      { attempts: () => 'attempts + 1', lastError: null, ...this.appliedRaw() },
      false,
    );
    const presumed = { outcome: this.batches().presumed, appliedAt: new Date() };
    await this.updateByKeys(em, events, presumed, true);
  }

  private async updateByKeys(
    em: EntityManager,
    events: E[],
    changes: Record<string, unknown>,
    onlyUnapplied: boolean,
  ): Promise<void> {
    const keys = events.map((e) => e.eventKey);
    for (const chunk of chunks(keys)) {
      const qb = em
        .getRepository<E>(this.events.target)
        .createQueryBuilder()
        .update()
        .set(changes as never)
        .where('event_key IN (:...keys)', { keys: chunk });
      if (onlyUnapplied) qb.andWhere('outcome IS NULL');
      await qb.execute();
    }
  }

  /** The stored rows of these events (copies received before), read by their keys. */
  private async storedCopies(em: EntityManager, events: E[]): Promise<E[]> {
    const stored: E[] = [];
    for (const chunk of chunks(events.map((e) => e.eventKey))) {
      const where = { in: { eventKey: chunk } as ListMatch<E>['in'] };
      stored.push(...((await this.batches().dialect.findIn<E>(em, this.events.target, where)) as E[]));
    }
    return stored;
  }

  private batches(): BatchOptions {
    if (!this.many) throw new Error(`${this.what}: receiving in batches needs the inbox's batch options`);
    return this.many;
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
      for (const chunk of chunks(keys)) {
        await this.events
          .createQueryBuilder()
          .update()
          .set({ lastError: message.slice(0, MAX_ERROR), attempts: () => 'attempts + 1' } as never)
          .where('event_key IN (:...keys) AND outcome IS NULL', { keys: chunk })
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
        ...this.appliedRaw(),
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

/** Stored copies still unapplied that no request is applying. */
function retryable<E extends InboundEvent>(copies: E[]): E[] {
  return copies.filter((e) => e.outcome === null && isRetryable(e));
}

function isRetryable(event: InboundEvent): boolean {
  return event.lastError !== null || event.createdAt.getTime() < Date.now() - IN_FLIGHT_MS;
}

function count(groups: ReadonlyArray<readonly unknown[]>): number {
  return groups.reduce((n, group) => n + group.length, 0);
}
