import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { BadRequestError } from '../../common/errors/domain-error';
import { Applied, InboundEventInbox } from '../../database/inbound-events';
import { Job } from '../jobs/job.decorator';
import { Notifier } from '../notifications/notifier';
import { BillingPaymentsService } from './billing-payments.service';
import { Billing } from './entities/billing.entity';
import { PaymentEvent, PaymentOutcome } from './entities/payment-event.entity';

/** What the callback answers: `{ billingUuid?, outcome }`. */
export interface PaymentCallbackResult {
  billingUuid?: string;
  outcome: PaymentOutcome;
}

/** The event is stored but could not be applied: 503 so the gateway retries (retry-callbacks also will). */

interface ParsedCallback {
  id: string;
  status: string;
  externalId: string | null;
}

/**
 * Payment-gateway callbacks (integrations.md), through the inbound-event pattern
 * (InboundEventInbox): stored raw in `payment_events` first (the unique `eventKey` = invoice
 * id + status, and `webhookId`, make copies no-ops), then applied to its billing through
 * BillingPaymentsService (row lock, one transaction). An event whose application failed stays
 * stored with `outcome` null and is applied again by the gateway's retry or by the
 * `retry-callbacks` job.
 */
@Injectable()
export class PaymentCallbacksService {
  private readonly logger = new Logger(PaymentCallbacksService.name);
  private readonly inbox: InboundEventInbox<PaymentEvent>;
  private readonly apply = (event: PaymentEvent) => this.decide(event);

  constructor(
    @InjectRepository(PaymentEvent) events: Repository<PaymentEvent>,
    @InjectRepository(Billing) private readonly billings: Repository<Billing>,
    private readonly payments: BillingPaymentsService,
    private readonly notifications: Notifier,
  ) {
    this.inbox = new InboundEventInbox(events, 'Payment callback');
  }

  /** Stores the callback, then applies it. 400 for a body that is not a gateway invoice callback. */
  async receive(payload: Record<string, unknown>, webhookId?: string): Promise<PaymentCallbackResult> {
    const parsed = parseCallback(payload);
    const hookId = webhookId?.trim() || null;
    if (hookId && hookId.length > 200) throw new BadRequestError('webhook-id header is too long');

    const event = Object.assign(new PaymentEvent(), {
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
    const received = await this.inbox.receive(event, this.apply);
    const billingUuid =
      received.kind === 'duplicate' ? received.event?.billingUuid : received.applied.record?.billingUuid;
    const outcome =
      received.kind === 'duplicate' ? 'duplicate' : (received.applied.outcome as PaymentOutcome);
    return { ...(billingUuid ? { billingUuid } : {}), outcome };
  }

  /**
   * `retry-callbacks`: applies stored events that are still unapplied (a failed attempt, or one
   * left behind by a crash), oldest first, a bounded batch per run. Returns how many it applied.
   */
  @Job('retry-callbacks', { shared: true })
  retryUnapplied(): Promise<number> {
    return this.inbox.retryUnapplied(this.apply);
  }

  /** Applies one stored event to its billing; the outcome and the billing are recorded on the event's row. */
  private async decide(event: PaymentEvent): Promise<Applied<PaymentEvent>> {
    const billing = event.externalId ? await this.billings.findOneBy({ externalId: event.externalId }) : null;
    const outcome = billing ? await this.outcomeFor(billing, event) : 'ignored';
    const billingUuid = billing?.uuid ?? null;
    if (outcome === 'ignored') {
      this.logger.warn(
        { eventId: event.id, externalId: event.externalId, status: event.status, billingUuid },
        'Payment callback ignored',
      );
    }
    return { outcome, record: { billingUuid } };
  }

  private async outcomeFor(billing: Billing, event: PaymentEvent): Promise<PaymentOutcome> {
    if (billing.gatewayInvoiceId && billing.gatewayInvoiceId !== event.gatewayInvoiceId) return 'ignored';
    const payload = JSON.parse(event.raw) as Record<string, unknown>;

    switch (event.status ?? '') {
      case 'PAID':
      case 'SETTLED':
        return this.applyPaid(billing, event, payload);
      case 'EXPIRED':
        return (await this.payments.expire(billing.id)) ? 'applied' : 'ignored';
      default:
        // PENDING, or a status this service does not act on: stored, nothing to change.
        return 'ignored';
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
