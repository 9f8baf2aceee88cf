import { ConflictError } from '../../common/errors/domain-error';
import type { Billing, BillingStatus } from './entities/billing.entity';

/** What can happen to a billing; each is drawn as an arrow in resources.md. */
export type BillingEvent =
  'gateway_paid' | 'approve' | 'upload_proof' | 'reject' | 'refund' | 'expire' | 'cancel';

const TRANSITIONS: Record<BillingEvent, Partial<Record<BillingStatus, BillingStatus>>> = {
  gateway_paid: { pending: 'paid' },
  approve: { pending: 'paid', awaiting_review: 'paid' },
  upload_proof: { pending: 'awaiting_review' },
  reject: { awaiting_review: 'pending' },
  refund: { paid: 'refunded' },
  expire: { pending: 'expired' },
  cancel: { pending: 'cancelled' },
};

const VERB: Record<BillingEvent, string> = {
  gateway_paid: 'mark as paid',
  approve: 'approve',
  upload_proof: 'upload a proof for',
  reject: 'reject',
  refund: 'refund',
  expire: 'expire',
  cancel: 'cancel',
};

/** A transition that is not drawn: always a 409. */
export class BillingStateError extends ConflictError {
  constructor(
    readonly from: BillingStatus,
    readonly event: BillingEvent,
  ) {
    super(`Cannot ${VERB[event]} a billing that is ${from.replace('_', ' ')}`);
  }
}

export function canTransition(from: BillingStatus, event: BillingEvent): boolean {
  return TRANSITIONS[event][from] !== undefined;
}

/** The status after `event`, or a BillingStateError (409). */
export function nextBillingStatus(from: BillingStatus, event: BillingEvent): BillingStatus {
  const to = TRANSITIONS[event][from];
  if (!to) throw new BillingStateError(from, event);
  return to;
}

/** Billings a company may still pay (at most one per package at a time). */
export const OPEN_BILLING_STATUSES: readonly BillingStatus[] = ['pending', 'awaiting_review'];

/** Whether the payment gateway may take a payment for the billing now (see assertGatewayPayable). */
export function isGatewayPayable(billing: Pick<Billing, 'method' | 'status'>): boolean {
  return billing.method === 'gateway' && canTransition(billing.status, 'gateway_paid');
}

/**
 * 409 unless the payment gateway may take a payment for the billing now: a gateway billing
 * (not a manual transfer) that can still be marked paid by the gateway (`pending`).
 */
export function assertGatewayPayable(billing: Pick<Billing, 'method' | 'status'>): void {
  if (billing.method !== 'gateway') {
    throw new ConflictError('This billing is paid by manual transfer, not through the payment gateway');
  }
  if (!canTransition(billing.status, 'gateway_paid')) {
    throw new ConflictError(`Cannot pay a billing that is ${billing.status.replace('_', ' ')}`);
  }
}
