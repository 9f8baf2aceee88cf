import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Brackets, EntityManager, In, IsNull, MoreThanOrEqual } from 'typeorm';
import { EncryptionService } from '../../common/crypto/encryption.service';
import { AppConfig } from '../../config/app-config';
import { chunks } from '../../database/chunks';
import { SqlDialect } from '../../database/sql-dialect';
import { TransactionService } from '../../database/transaction.service';
import { nextAttemptDelayMs } from './delivery/retry-schedule';
import { AttemptResult, WebhookHttpClient } from './delivery/webhook-http-client';
import { signedHeaders } from './delivery/webhook-signing';
import { WebhookAttempt } from './entities/webhook-attempt.entity';
import { WebhookDelivery } from './entities/webhook-delivery.entity';
import { WebhookEvent } from './entities/webhook-event.entity';
import { Webhook } from './entities/webhook.entity';
import { WebhookWork } from './webhook-outbox';
import { WebhookDisabledNotices } from './webhook-disabled-notices';

/** Attempts in flight at once for one endpoint (platform.md "Delivery"). */
export const PER_ENDPOINT_IN_FLIGHT = 10;
/** How long a claimed attempt is the claimer's: past it (the process died) another takes it. */
const CLAIM_MS = 60_000;
/** How often the queue is looked at when nothing wakes the dispatcher. */
const POLL_MS = 1_000;
/** An endpoint with no success for this long and at least FAILING_ATTEMPTS failed attempts is disabled. */
export const FAILING_FOR_MS = 5 * 86_400_000;
export const FAILING_ATTEMPTS = 20;

/** A delivery claimed for one attempt, with what the attempt needs. */
interface Claimed {
  delivery: WebhookDelivery;
  webhook: Webhook;
  event: WebhookEvent;
}

/**
 * An attempt's place in the limits, from its claim until it is recorded: whether it still counts
 * against WEBHOOK_CONCURRENCY or only waits on its endpoint (SLOW_ATTEMPT_MS).
 */
interface Slot {
  startedAt: number;
  answered: boolean;
  waiting: boolean;
}

/** An attempt made, waiting to be recorded. */
interface Attempted {
  claimed: Claimed;
  result: AttemptResult;
  slot: Slot;
}

/**
 * The deliveries an attempt may be made for: due, and no earlier event of the same record still
 * pending for the endpoint (SQL over the claim's alias `q`). A record's first event (most are)
 * has none before it: the look for one is skipped.
 */
const READY = `q.status = 'pending' AND q.next_attempt_at <= :now AND (q.seq IS NULL OR q.seq <= 1 OR NOT EXISTS (
  SELECT 1 FROM webhook_deliveries p WHERE p.webhook_id = q.webhook_id AND p.record_id = q.record_id
  AND p.seq < q.seq AND p.status = 'pending'))`;

/** Attempts recorded in one transaction at most. */
const RECORD_BATCH = 500;
/**
 * The least time between two claims while fewer than half the slots are free, and how long
 * finished attempts wait to be recorded together: each claim and each record is a transaction
 * (on SQLite each holds the one connection and costs a commit), so at a thousand attempts a
 * second they go by batches.
 */
const CLAIM_INTERVAL_MS = 50;
const RECORD_INTERVAL_MS = 10;
/** An endpoint's `lastSuccessAt` is moved at most this often while its deliveries succeed. */
const SUCCESS_MARK_MS = 1_000;
/**
 * An attempt its endpoint has not answered within this long waits on the endpoint, not on this
 * process: it leaves WEBHOOK_CONCURRENCY's count for a second one of the same size (still one of
 * its endpoint's PER_ENDPOINT_IN_FLIGHT), so a few slow endpoints never hold the others' slots
 * (platform.md: one endpoint's slowness never delays another's). Looked at every quarter of it.
 */
const SLOW_ATTEMPT_MS = 1_000;
/** Signing secrets kept opened (by their sealed text) before the cache starts again. */
const OPENED_SECRETS = 1_000;

/**
 * Sends the deliveries the outbox wrote (platform.md "Delivery"), in every process where
 * WEBHOOK_DISPATCHER is on. A delivery is claimed before its attempt, in one statement that reads
 * each endpoint's first due deliveries (on PostgreSQL with SKIP LOCKED, so that replicas share
 * the queue and each attempt is made by one of them) and moves them a minute ahead, so a
 * delivery whose claimer died is attempted again after that. At most WEBHOOK_CONCURRENCY attempts
 * are at work in a process, at most PER_ENDPOINT_IN_FLIGHT per endpoint, and one its endpoint
 * leaves unanswered past SLOW_ATTEMPT_MS only waits (up to WEBHOOK_CONCURRENCY more), so slow
 * endpoints never hold the others back. A record's later events wait behind an earlier one still
 * pending. Attempts are recorded together, in one transaction for the ones that finished meanwhile.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WebhookDispatcher.name);
  private readonly http: WebhookHttpClient;
  /** Attempts of each endpoint claimed and not yet recorded. */
  private readonly inFlight = new Map<number, number>();
  /** Every attempt from its claim until it is recorded, oldest first. */
  private readonly slots = new Set<Slot>();
  private readonly attempts = new Set<Promise<void>>();
  private readonly attempted: Attempted[] = [];
  private readonly openedSecrets = new Map<string, string>();
  private recording?: Promise<void>;
  private inFlightTotal = 0;
  /** Attempts past SLOW_ATTEMPT_MS that no longer count in inFlightTotal. */
  private waitingTotal = 0;
  private slowSweep?: NodeJS.Timeout;
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  private pendingWake = false;

  constructor(
    private readonly transactions: TransactionService,
    private readonly dialect: SqlDialect,
    private readonly config: AppConfig,
    private readonly encryption: EncryptionService,
    private readonly disabledNotices: WebhookDisabledNotices,
    work: WebhookWork,
  ) {
    this.http = new WebhookHttpClient({
      allowHttp: config.webhookAllowHttp,
      allowPrivateTargets: config.env.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    });
    work.onChange(() => this.nudge());
  }

  onApplicationBootstrap(): void {
    if (!this.config.env.WEBHOOK_DISPATCHER) return;
    this.running = true;
    this.loop = this.run();
    this.slowSweep = setInterval(() => this.releaseSlowAttempts(), SLOW_ATTEMPT_MS / 4).unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.running = false;
    clearInterval(this.slowSweep);
    this.nudge();
    await this.loop;
    await Promise.allSettled([...this.attempts]);
    while (this.recording) await this.recording;
    await this.http.close();
  }

  /** Looks for work now rather than at the next poll. */
  nudge(): void {
    this.pendingWake = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      const free = this.config.env.WEBHOOK_CONCURRENCY - this.inFlightTotal;
      const claimedAt = Date.now();
      if (free > 0) {
        try {
          await this.claimAndSend(free);
        } catch (e: unknown) {
          this.logger.warn({ err: e }, 'Could not claim webhook deliveries; trying again shortly');
        }
      }
      // A claim takes whatever is ready: the next is worth making once something changed.
      await this.idle();
      // Half the slots free (a batch was recorded): worth a claim now; a few: soon, together.
      const few =
        this.config.env.WEBHOOK_CONCURRENCY - this.inFlightTotal < this.config.env.WEBHOOK_CONCURRENCY / 2;
      const early = claimedAt + CLAIM_INTERVAL_MS - Date.now();
      if (few && early > 0 && this.running) await sleep(early);
    }
  }

  /** Waits for a nudge (events committed, attempts recorded) or the poll interval. */
  private idle(): Promise<void> {
    if (this.pendingWake) {
      this.pendingWake = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        this.pendingWake = false;
        resolve();
      };
      const timer = setTimeout(done, POLL_MS);
      this.wake = done;
    });
  }

  /** Claims up to `free` ready deliveries and starts their attempts. */
  private async claimAndSend(free: number): Promise<void> {
    const claimed = await this.transactions.run((em) => this.claim(em, free));
    for (const c of claimed) {
      this.inFlightTotal += 1;
      this.inFlight.set(c.webhook.id, (this.inFlight.get(c.webhook.id) ?? 0) + 1);
      const slot: Slot = { startedAt: Date.now(), answered: false, waiting: false };
      this.slots.add(slot);
      const attempt = this.attempt(c)
        .then((result) => {
          slot.answered = true;
          return this.recordLater({ claimed: c, result, slot });
        })
        .finally(() => this.attempts.delete(attempt));
      this.attempts.add(attempt);
    }
  }

  /** Moves the attempts unanswered for SLOW_ATTEMPT_MS out of WEBHOOK_CONCURRENCY's count, oldest first. */
  private releaseSlowAttempts(): void {
    const startedBefore = Date.now() - SLOW_ATTEMPT_MS;
    let released = 0;
    for (const slot of this.slots) {
      if (slot.startedAt > startedBefore || this.waitingTotal >= this.config.env.WEBHOOK_CONCURRENCY) break;
      if (slot.waiting || slot.answered) continue;
      slot.waiting = true;
      this.inFlightTotal -= 1;
      this.waitingTotal += 1;
      released += 1;
    }
    if (released) this.nudge();
  }

  private async claim(em: EntityManager, free: number): Promise<Claimed[]> {
    const now = new Date();
    const enabled = await em.find(Webhook, { where: { enabled: true }, select: { id: true } });
    const claim = randomUUID();
    const ids = await this.dialect.claimPerGroup(em, WebhookDelivery, {
      group: 'webhookId',
      groups: enabled.map((w) => ({
        value: w.id,
        limit: PER_ENDPOINT_IN_FLIGHT - (this.inFlight.get(w.id) ?? 0),
      })),
      ready: READY,
      parameters: { now },
      order: ['nextAttemptAt', 'id'],
      total: free,
      set: { claim, nextAttemptAt: new Date(now.getTime() + CLAIM_MS) },
    });
    if (ids.length === 0) return [];
    const deliveries = await em.find(WebhookDelivery, { where: { id: In(ids) } });
    const webhooks = new Map(
      (
        await em
          .createQueryBuilder(Webhook, 'w')
          .addSelect(['w.secret', 'w.previousSecret'])
          .where({ id: In([...new Set(deliveries.map((d) => d.webhookId))]) })
          .getMany()
      ).map((w) => [w.id, w]),
    );
    const events = new Map(
      (await em.find(WebhookEvent, { where: { id: In(deliveries.map((d) => d.eventId)) } })).map((e) => [
        e.id,
        e,
      ]),
    );
    return deliveries.map((delivery) => ({
      delivery,
      webhook: webhooks.get(delivery.webhookId)!,
      event: events.get(delivery.eventId)!,
    }));
  }

  private async attempt({ webhook, event }: Claimed): Promise<AttemptResult> {
    const now = new Date();
    let secrets: string[];
    try {
      secrets = [this.open(webhook.secret)];
      if (webhook.previousSecret && webhook.previousSecretUntil && webhook.previousSecretUntil > now) {
        secrets.push(this.open(webhook.previousSecret));
      }
    } catch {
      // Sealed with another ENCRYPTION_KEY: nothing can be signed; the attempt fails, as a network error would.
      const error = 'the signing secret cannot be read (was ENCRYPTION_KEY changed?)';
      return { at: now, ms: 0, error, body: '', outcome: 'failed' };
    }
    return this.http.send(
      webhook.url,
      signedHeaders(event.eventId, event.payload, secrets, now),
      event.payload,
    );
  }

  /** A signing secret opened, from a small cache: opening one costs more than signing with it. */
  private open(sealed: string): string {
    let secret = this.openedSecrets.get(sealed);
    if (secret === undefined) {
      secret = this.encryption.decrypt(sealed);
      if (this.openedSecrets.size >= OPENED_SECRETS) this.openedSecrets.clear();
      this.openedSecrets.set(sealed, secret);
    }
    return secret;
  }

  /** Queues an attempt's outcome; the attempts that finish while one batch is written go in the next. */
  private recordLater(attempted: Attempted): Promise<void> {
    this.attempted.push(attempted);
    return this.recordSoon();
  }

  /** Records what waits within RECORD_INTERVAL_MS, and again when more came as it ended. */
  private recordSoon(): Promise<void> {
    this.recording ??= sleep(RECORD_INTERVAL_MS)
      .then(() => this.recordQueued())
      .finally(() => {
        this.recording = undefined;
        if (this.attempted.length) void this.recordSoon();
      });
    return this.recording;
  }

  private async recordQueued(): Promise<void> {
    while (this.attempted.length > 0) {
      const batch = this.attempted.splice(0, RECORD_BATCH);
      try {
        await this.transactions.run((em) => this.record(em, batch));
      } catch (e: unknown) {
        // Their claims lapse and they are attempted again: a repeat, never a loss.
        this.logger.error({ err: e }, `${batch.length} webhook attempts could not be recorded`);
      }
      for (const { claimed, slot } of batch) {
        if (slot.waiting) this.waitingTotal -= 1;
        else this.inFlightTotal -= 1;
        this.slots.delete(slot);
        const left = (this.inFlight.get(claimed.webhook.id) ?? 1) - 1;
        if (left > 0) this.inFlight.set(claimed.webhook.id, left);
        else this.inFlight.delete(claimed.webhook.id);
      }
      this.nudge();
    }
  }

  /**
   * Keeps the attempts, moves their deliveries on and the endpoints' health with them, in one
   * transaction. Only the holder of a claim moves its delivery: when the claim lapsed and another
   * process took the delivery again, the attempt is kept in the history and nothing else.
   */
  private async record(em: EntityManager, batch: readonly Attempted[]): Promise<void> {
    const now = new Date();
    await this.dialect.insertMany(
      em,
      WebhookAttempt,
      batch.map(({ claimed, result }) => ({
        deliveryId: claimed.delivery.id,
        at: result.at,
        status: result.status ?? null,
        error: errorOf(result),
        ms: result.ms,
        body: result.body,
      })),
      'ignore',
    );
    // Every attempt made counts, its claim held or lost (a retry asked for meanwhile takes it over).
    const made = new Map<number, number>();
    for (const { claimed } of batch) made.set(claimed.delivery.id, (made.get(claimed.delivery.id) ?? 0) + 1);
    for (const times of new Set(made.values())) {
      const ids = [...made].filter(([, n]) => n === times).map(([id]) => id);
      for (const part of chunks(ids)) {
        await em
          .createQueryBuilder()
          .update(WebhookDelivery)
          .set({ attempts: () => `attempts + ${times}` })
          .where({ id: In(part) })
          .execute();
      }
    }
    const delivered = batch.filter((a) => a.result.outcome === 'delivered');
    const succeeded = await this.dialect.updateEach(
      em,
      WebhookDelivery,
      delivered.map(({ claimed, result }) => ({
        match: { id: claimed.delivery.id, claim: claimed.delivery.claim },
        set: {
          ...lastAttempt(result),
          status: 'delivered',
          nextAttemptAt: null,
          updatedAt: now,
        },
      })),
      'webhookId',
    );
    if (succeeded.length > 0) {
      // Moved when it was not moved a moment ago, or when the endpoint was failing.
      await em
        .createQueryBuilder()
        .update(Webhook)
        .set({ lastSuccessAt: now, failingSince: null })
        .where({ id: In([...new Set(succeeded)].sort((a, b) => a - b)) })
        .andWhere(
          new Brackets((w) =>
            w
              .where('failing_since IS NOT NULL')
              .orWhere('last_success_at IS NULL')
              .orWhere('last_success_at < :recently', {
                recently: new Date(now.getTime() - SUCCESS_MARK_MS),
              }),
          ),
        )
        .execute();
    }
    for (const failed of batch)
      if (failed.result.outcome !== 'delivered') await this.recordFailure(em, failed);
  }

  /** Moves a failed attempt's delivery to its next attempt (or gives up), and the endpoint's health with it. */
  private async recordFailure(em: EntityManager, { claimed, result }: Attempted): Promise<void> {
    const { delivery, webhook } = claimed;
    const at = result.at;
    const last = lastAttempt(result);
    const delay =
      result.outcome === 'gone' ? null : nextAttemptDelayMs(delivery.attempts + 1, result.retryAfterMs);
    const moved = await em.update(
      WebhookDelivery,
      { id: delivery.id, claim: delivery.claim ?? '' },
      delay === null
        ? { ...last, status: 'failed', nextAttemptAt: null }
        : { ...last, nextAttemptAt: new Date(Date.now() + delay) },
    );
    if (!moved.affected) return;
    await em.update(Webhook, { id: webhook.id }, { lastFailureAt: at });
    await em.update(Webhook, { id: webhook.id, failingSince: IsNull() }, { failingSince: at });
    if (result.outcome === 'gone') {
      await this.disable(em, webhook, 'gone');
    } else if (await this.failingLongEnough(em, webhook.id)) {
      await this.disable(em, webhook, 'failing');
    }
  }

  /** No success for FAILING_FOR_MS and at least FAILING_ATTEMPTS failed attempts since. */
  private async failingLongEnough(em: EntityManager, webhookId: number): Promise<boolean> {
    const current = await em.findOne(Webhook, {
      where: { id: webhookId },
      select: { id: true, failingSince: true },
    });
    if (!current?.failingSince || Date.now() - current.failingSince.getTime() < FAILING_FOR_MS) return false;
    const failed = await em
      .createQueryBuilder(WebhookAttempt, 'a')
      .innerJoin(WebhookDelivery, 'd', 'd.id = a.delivery_id')
      .where('d.webhook_id = :webhookId', { webhookId })
      .andWhere({ at: MoreThanOrEqual(current.failingSince) })
      .getCount();
    return failed >= FAILING_ATTEMPTS;
  }

  /** Disables the endpoint (once) and tells the owners, in the transaction of the attempt that decided it. */
  private async disable(em: EntityManager, webhook: Webhook, reason: 'gone' | 'failing'): Promise<void> {
    const changed = await em.update(
      Webhook,
      { id: webhook.id, enabled: true },
      { enabled: false, disabledReason: reason },
    );
    if (!changed.affected) return;
    this.logger.warn(`Webhook ${webhook.uuid} disabled (${reason})`);
    await this.disabledNotices.tell(em, webhook, reason);
  }
}

/** An attempt's error as kept (300 characters at most). */
const errorOf = (result: AttemptResult): string | null => result.error?.slice(0, 300) ?? null;

/** What a delivery keeps of its latest attempt (its count is added apart); its claim ends with it. */
function lastAttempt(result: AttemptResult) {
  return {
    lastAttemptAt: result.at,
    lastStatus: result.status ?? null,
    lastError: errorOf(result),
    lastMs: result.ms,
    lastBody: result.body,
    claim: null,
  };
}
