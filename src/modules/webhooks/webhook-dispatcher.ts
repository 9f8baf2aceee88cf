import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In, IsNull, LessThanOrEqual, MoreThanOrEqual } from 'typeorm';
import { EncryptionService } from '../../common/crypto/encryption.service';
import { AppConfig } from '../../config/app-config';
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
 * Sends the deliveries the outbox wrote (platform.md "Delivery"), in every process where
 * WEBHOOK_DISPATCHER is on. A delivery is claimed before its attempt: on PostgreSQL with row
 * locks and SKIP LOCKED, so that replicas share the queue and each attempt is made by one of
 * them; the claim moves `nextAttemptAt` a minute ahead, so a delivery whose claimer died is
 * attempted again after that. At most WEBHOOK_CONCURRENCY attempts are in flight in a process,
 * at most PER_ENDPOINT_IN_FLIGHT per endpoint, claimed endpoint by endpoint, so one slow endpoint
 * never holds the others back. A record's later events wait behind an earlier one still pending.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WebhookDispatcher.name);
  private readonly http: WebhookHttpClient;
  private readonly inFlight = new Map<number, number>();
  private readonly attempts = new Set<Promise<void>>();
  private inFlightTotal = 0;
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  private pendingWake = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
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
  }

  async onApplicationShutdown(): Promise<void> {
    this.running = false;
    this.nudge();
    await this.loop;
    await Promise.allSettled([...this.attempts]);
    await this.http.close();
  }

  /** Looks for work now rather than at the next poll. */
  nudge(): void {
    this.pendingWake = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      let claimed = 0;
      const free = this.config.env.WEBHOOK_CONCURRENCY - this.inFlightTotal;
      if (free > 0) {
        try {
          claimed = await this.claimAndSend(free);
        } catch (e: unknown) {
          this.logger.warn({ err: e }, 'Could not claim webhook deliveries; trying again shortly');
        }
      }
      if (claimed === 0 || this.inFlightTotal >= this.config.env.WEBHOOK_CONCURRENCY) await this.idle();
    }
  }

  /** Waits for a nudge, a finished attempt or the poll interval. */
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

  /** Claims up to `free` due deliveries and starts their attempts; answers how many. */
  private async claimAndSend(free: number): Promise<number> {
    const claimed = await this.transactions.run((em) => this.claim(em, free));
    for (const c of claimed) {
      this.inFlightTotal += 1;
      this.inFlight.set(c.webhook.id, (this.inFlight.get(c.webhook.id) ?? 0) + 1);
      const attempt = this.attempt(c)
        .catch((e: unknown) => this.logger.error({ err: e }, 'Webhook attempt could not be recorded'))
        .finally(() => {
          this.inFlightTotal -= 1;
          const left = (this.inFlight.get(c.webhook.id) ?? 1) - 1;
          if (left > 0) this.inFlight.set(c.webhook.id, left);
          else this.inFlight.delete(c.webhook.id);
          this.attempts.delete(attempt);
          this.nudge();
        });
      this.attempts.add(attempt);
    }
    return claimed.length;
  }

  private async claim(em: EntityManager, free: number): Promise<Claimed[]> {
    const now = new Date();
    // Due deliveries of enabled endpoints, the first few of each endpoint, a record's later
    // events behind an earlier one still pending.
    const candidates: Array<{ id: number | string; webhook_id: number | string }> = await em
      .createQueryBuilder()
      .select(['ranked.id AS id', 'ranked.webhook_id AS webhook_id'])
      .from((sub) => {
        return sub
          .select(['d.id AS id', 'd.webhook_id AS webhook_id'])
          .addSelect('ROW_NUMBER() OVER (PARTITION BY d.webhook_id ORDER BY d.next_attempt_at, d.id)', 'rn')
          .from(WebhookDelivery, 'd')
          .innerJoin(Webhook, 'w', 'w.id = d.webhook_id')
          .where("d.status = 'pending'")
          .andWhere('d.next_attempt_at <= :now', { now })
          .andWhere('w.enabled = :enabled', { enabled: true })
          .andWhere(
            `NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.webhook_id = d.webhook_id
             AND p.record_id = d.record_id AND p.seq < d.seq AND p.status = 'pending')`,
          );
      }, 'ranked')
      .where('ranked.rn <= :perEndpoint', { perEndpoint: PER_ENDPOINT_IN_FLIGHT })
      .orderBy('ranked.rn')
      .addOrderBy('ranked.id')
      .limit(free * 2)
      .getRawMany();
    const chosen: number[] = [];
    const taken = new Map<number, number>();
    for (const row of candidates) {
      const webhookId = Number(row.webhook_id);
      const busy = (this.inFlight.get(webhookId) ?? 0) + (taken.get(webhookId) ?? 0);
      if (busy >= PER_ENDPOINT_IN_FLIGHT || chosen.length >= free) continue;
      taken.set(webhookId, (taken.get(webhookId) ?? 0) + 1);
      chosen.push(Number(row.id));
    }
    if (chosen.length === 0) return [];
    // Locked here (another replica's claims are skipped), then moved out of the due window.
    const locked = await this.dialect
      .skipLocked(
        em
          .createQueryBuilder(WebhookDelivery, 'd')
          .select('d.id')
          .where({ id: In(chosen), status: 'pending', nextAttemptAt: LessThanOrEqual(now) }),
      )
      .getMany();
    if (locked.length === 0) return [];
    // Taken only where still due: whatever another process did meanwhile, one claim wins a row.
    const claim = randomUUID();
    await em.update(
      WebhookDelivery,
      { id: In(locked.map((d) => d.id)), status: 'pending', nextAttemptAt: LessThanOrEqual(now) },
      { claim, nextAttemptAt: new Date(now.getTime() + CLAIM_MS) },
    );
    const deliveries = await em.find(WebhookDelivery, { where: { claim } });
    if (deliveries.length === 0) return [];
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

  private async attempt({ delivery, webhook, event }: Claimed): Promise<void> {
    const now = new Date();
    let secrets: string[];
    try {
      secrets = [this.encryption.decrypt(webhook.secret)];
      if (webhook.previousSecret && webhook.previousSecretUntil && webhook.previousSecretUntil > now) {
        secrets.push(this.encryption.decrypt(webhook.previousSecret));
      }
    } catch {
      // Sealed with another ENCRYPTION_KEY: nothing can be signed; the attempt fails, as a network error would.
      const error = 'the signing secret cannot be read (was ENCRYPTION_KEY changed?)';
      await this.record(delivery, webhook, { at: now, ms: 0, error, body: '', outcome: 'failed' });
      return;
    }
    const result = await this.http.send(
      webhook.url,
      signedHeaders(event.eventId, event.payload, secrets, now),
      event.payload,
    );
    await this.record(delivery, webhook, result);
  }

  /**
   * Keeps the attempt, moves the delivery on and the endpoint's health with it, in one
   * transaction. Only the holder of the claim moves the delivery: when the claim lapsed and
   * another process took the delivery again, this attempt is kept in the history and nothing else.
   */
  private async record(delivery: WebhookDelivery, webhook: Webhook, result: AttemptResult): Promise<void> {
    const attempts = delivery.attempts + 1;
    const at = result.at;
    const error = result.error?.slice(0, 300) ?? null;
    await this.transactions.run(async (em) => {
      await em.insert(WebhookAttempt, {
        deliveryId: delivery.id,
        at,
        status: result.status ?? null,
        error,
        ms: result.ms,
        body: result.body,
      });
      const last = {
        attempts,
        lastAttemptAt: at,
        lastStatus: result.status ?? null,
        lastError: error,
        lastMs: result.ms,
        lastBody: result.body,
        claim: null,
      };
      const claimed = { id: delivery.id, claim: delivery.claim ?? '' };
      if (result.outcome === 'delivered') {
        const moved = await em.update(WebhookDelivery, claimed, {
          ...last,
          status: 'delivered',
          nextAttemptAt: null,
        });
        if (moved.affected)
          await em.update(Webhook, { id: webhook.id }, { lastSuccessAt: at, failingSince: null });
        return;
      }
      const delay = result.outcome === 'gone' ? null : nextAttemptDelayMs(attempts, result.retryAfterMs);
      const moved = await em.update(
        WebhookDelivery,
        claimed,
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
    });
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
