import { HttpStatus, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Brackets, QueryFailedError, Repository } from 'typeorm';
import { BadRequestError, DomainError } from '../../common/errors/domain-error';
import { JobRegistry } from '../jobs/job-registry';
import { NotificationsService } from '../notifications/notifications.service';
import { BillingPaymentsService } from './billing-payments.service';
import { Billing } from './entities/billing.entity';
import { PaymentEvent, PaymentOutcome } from './entities/payment-event.entity';

/** What the callback answers: `{ billingUuid?, outcome }`. */
export interface PaymentCallbackResult {
  billingUuid?: string;
  outcome: PaymentOutcome;
}

/** The event is stored but could not be applied: 503 so the gateway retries (retry-callbacks also will). */
export class PaymentCallbackNotAppliedError extends DomainError {
  constructor() {
    super(HttpStatus.SERVICE_UNAVAILABLE, 'Payment callback stored but not applied yet; retry later');
  }
}

const UNIQUE_VIOLATION = new Set(['23505', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT']);
/** An unapplied event younger than this, never failed, is still being applied by the request that stored it. */
const IN_FLIGHT_MS = 30_000;
const RETRY_BATCH = 50;
const MAX_ERROR = 1000;

interface ParsedCallback {
  id: string;
  status: string;
  externalId: string | null;
}

/**
 * Payment-gateway callbacks (integrations.md): each one is stored raw in `payment_events`
 * first (the unique `eventKey` = invoice id + status, and `webhookId`, make copies no-ops),
 * then applied to its billing through BillingPaymentsService (row lock, one transaction).
 * An event whose application failed stays stored with `outcome` null and is applied again by
 * the gateway's retry or by the `retry-callbacks` job.
 */
@Injectable()
export class PaymentCallbacksService implements OnModuleInit {
  private readonly logger = new Logger(PaymentCallbacksService.name);

  constructor(
    @InjectRepository(PaymentEvent) private readonly events: Repository<PaymentEvent>,
    @InjectRepository(Billing) private readonly billings: Repository<Billing>,
    private readonly payments: BillingPaymentsService,
    private readonly notifications: NotificationsService,
    private readonly jobs: JobRegistry,
  ) {}

  onModuleInit(): void {
    this.jobs.register({ name: 'retry-callbacks', run: () => this.retryUnapplied() });
  }

  /** Stores the callback, then applies it. 400 for a body that is not a gateway invoice callback. */
  async receive(payload: Record<string, unknown>, webhookId?: string): Promise<PaymentCallbackResult> {
    const parsed = parseCallback(payload);
    const hookId = webhookId?.trim() || null;
    if (hookId && hookId.length > 200) throw new BadRequestError('webhook-id header is too long');

    const event = this.events.create({
      eventKey: `${parsed.id}:${parsed.status}`,
      webhookId: hookId,
      externalId: parsed.externalId,
      gatewayInvoiceId: parsed.id,
      status: parsed.status,
      raw: JSON.stringify(payload),
      outcome: null,
      billingUuid: null,
      attempts: 0,
      lastError: null,
      appliedAt: null,
    });
    try {
      await this.events.insert(event);
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      return this.onDuplicate(event.eventKey, hookId);
    }
    return this.applyOrFail(event);
  }

  /**
   * `retry-callbacks`: applies stored events that are still unapplied (a failed attempt, or one
   * left behind by a crash), oldest first, a bounded batch per run. Returns how many it applied.
   */
  async retryUnapplied(): Promise<number> {
    const due = await this.retryable().orderBy('event.id', 'ASC').take(RETRY_BATCH).getMany();
    let applied = 0;
    for (const event of due) {
      try {
        await this.apply(event);
        applied += 1;
      } catch (e) {
        await this.recordFailure(event, e);
      }
    }
    return applied;
  }

  /** A copy of a stored event: nothing changes, unless the stored one is still waiting for a retry. */
  private async onDuplicate(eventKey: string, webhookId: string | null): Promise<PaymentCallbackResult> {
    const qb = this.events.createQueryBuilder('event').where('event.event_key = :eventKey', { eventKey });
    if (webhookId) qb.orWhere('event.webhook_id = :webhookId', { webhookId });
    const existing = await qb.orderBy('event.id', 'ASC').getOne();
    if (existing && existing.outcome === null && isRetryable(existing)) return this.applyOrFail(existing);
    return { ...(existing?.billingUuid ? { billingUuid: existing.billingUuid } : {}), outcome: 'duplicate' };
  }

  private async applyOrFail(event: PaymentEvent): Promise<PaymentCallbackResult> {
    try {
      return await this.apply(event);
    } catch (e) {
      await this.recordFailure(event, e);
      throw new PaymentCallbackNotAppliedError();
    }
  }

  /** Applies one stored event and records its outcome on the row. */
  private async apply(event: PaymentEvent): Promise<PaymentCallbackResult> {
    const { outcome, billing } = await this.decide(event);
    const billingUuid = billing?.uuid ?? null;
    const qb = this.events
      .createQueryBuilder()
      .update(PaymentEvent)
      .set({
        outcome,
        billingUuid,
        appliedAt: new Date(),
        lastError: null,
        attempts: () => 'attempts + 1',
      })
      .where('id = :id', { id: event.id });
    // Only the one caller that changed the billing may overwrite another copy's record.
    if (outcome !== 'applied') qb.andWhere('outcome IS NULL');
    await qb.execute();
    if (outcome === 'ignored') {
      this.logger.warn(
        { eventId: event.id, externalId: event.externalId, status: event.status, billingUuid },
        'Payment callback ignored',
      );
    }
    return { ...(billingUuid ? { billingUuid } : {}), outcome };
  }

  private async decide(event: PaymentEvent): Promise<{ outcome: PaymentOutcome; billing: Billing | null }> {
    const billing = event.externalId ? await this.billings.findOneBy({ externalId: event.externalId }) : null;
    if (!billing) return { outcome: 'ignored', billing: null };
    if (billing.gatewayInvoiceId && billing.gatewayInvoiceId !== event.gatewayInvoiceId) {
      return { outcome: 'ignored', billing };
    }
    const payload = JSON.parse(event.raw) as Record<string, unknown>;

    switch (event.status ?? '') {
      case 'PAID':
      case 'SETTLED':
        return { outcome: await this.applyPaid(billing, event, payload), billing };
      case 'EXPIRED':
        return { outcome: (await this.payments.expire(billing.id)) ? 'applied' : 'ignored', billing };
      default:
        // PENDING, or a status this service does not act on: stored, nothing to change.
        return { outcome: 'ignored', billing };
    }
  }

  private async applyPaid(
    billing: Billing,
    event: PaymentEvent,
    payload: Record<string, unknown>,
  ): Promise<PaymentOutcome> {
    const paidAmount = payload.paid_amount ?? payload.amount;
    const currency = typeof payload.currency === 'string' ? payload.currency.trim().toUpperCase() : null;
    if (paidAmount !== billing.amount || currency !== billing.currency.toUpperCase()) {
      await this.notifications.notifyAdmins(['superAdmin', 'accounting'], {
        type: 'billing.amount_mismatch',
        title: `Payment mismatch on ${billing.number}`,
        body:
          `The gateway reported ${event.status} for ${describe(paidAmount)} ${currency ?? '(no currency)'}, ` +
          `but the billing is for ${billing.amount} ${billing.currency}. It was not marked paid.`,
        data: {
          billingUuid: billing.uuid,
          gatewayInvoiceId: event.gatewayInvoiceId,
          expected: { amount: billing.amount, currency: billing.currency },
          received: { amount: typeof paidAmount === 'number' ? paidAmount : null, currency },
        },
        email: true,
      });
      return 'mismatch';
    }

    const result = await this.payments.markPaid(billing.id, {
      event: 'gateway_paid',
      paidAt: parseDate(payload.paid_at) ?? new Date(),
      paidAmount: billing.amount, // equal to what the gateway reported (checked above)
      paymentMethod: shortString(payload.payment_method),
      paymentChannel: shortString(payload.payment_channel),
    });
    if (result.outcome === 'applied') return 'applied';
    // No longer pending: another copy (or SETTLED after PAID) already paid it through this invoice.
    const now = result.billing;
    const paidByThisInvoice =
      now.status === 'paid' &&
      !now.reviewedByAdminUuid &&
      (now.gatewayInvoiceId ?? event.gatewayInvoiceId) === event.gatewayInvoiceId;
    return paidByThisInvoice ? 'duplicate' : 'ignored';
  }

  private async recordFailure(event: PaymentEvent, error: unknown): Promise<void> {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    this.logger.error({ err: error, eventId: event.id }, 'Payment callback could not be applied');
    try {
      await this.events
        .createQueryBuilder()
        .update(PaymentEvent)
        .set({ lastError: message.slice(0, MAX_ERROR), attempts: () => 'attempts + 1' })
        .where('id = :id AND outcome IS NULL', { id: event.id })
        .execute();
    } catch (e) {
      // The database may be what failed; the row stays unapplied either way.
      this.logger.error({ err: e, eventId: event.id }, 'Could not record the failed payment callback');
    }
  }

  /** Unapplied events that no request is applying right now. */
  private retryable() {
    const cutoff = new Date(Date.now() - IN_FLIGHT_MS);
    return this.events
      .createQueryBuilder('event')
      .where('event.outcome IS NULL')
      .andWhere(
        new Brackets((w) => {
          w.where('event.last_error IS NOT NULL').orWhere('event.created_at < :cutoff', { cutoff });
        }),
      );
  }
}

function isRetryable(event: PaymentEvent): boolean {
  return event.lastError !== null || event.createdAt.getTime() < Date.now() - IN_FLIGHT_MS;
}

function isUniqueViolation(e: unknown): boolean {
  if (!(e instanceof QueryFailedError)) return false;
  const err = e as QueryFailedError & { code?: unknown; driverError?: { code?: unknown } };
  const code = err.driverError?.code ?? err.code;
  return typeof code === 'string' && UNIQUE_VIOLATION.has(code);
}

/** The fields the service needs; everything else stays in `raw` as it came. */
function parseCallback(payload: Record<string, unknown>): ParsedCallback {
  const { id, status, external_id: externalId } = payload;
  if (typeof id !== 'string' || !id.trim() || typeof status !== 'string' || !status.trim()) {
    throw new BadRequestError('Not a payment gateway invoice callback: id and status are required');
  }
  if (id.length > 64) throw new BadRequestError('id is too long');
  if (status.length > 32) throw new BadRequestError('status is too long');
  if (externalId !== undefined && externalId !== null && typeof externalId !== 'string') {
    throw new BadRequestError('external_id must be a string');
  }
  if (typeof externalId === 'string' && externalId.length > 64) {
    throw new BadRequestError('external_id is too long');
  }
  return { id: id.trim(), status: status.trim().toUpperCase(), externalId: externalId || null };
}

function parseDate(value: unknown): Date | null {
  if (typeof value !== 'string' && typeof value !== 'number') return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

function shortString(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value.trim().slice(0, 64) : null;
}

function describe(value: unknown): string {
  return typeof value === 'number' || typeof value === 'string' ? String(value) : '(no amount)';
}
