import { BILLING_STATUSES, BillingStatus } from './entities/billing.entity';
import {
  assertGatewayPayable,
  BillingEvent,
  BillingStateError,
  canTransition,
  isGatewayPayable,
  nextBillingStatus,
} from './billing-state';

/** Every arrow of the diagram in resources.md; everything else must be refused. */
const DRAWN: Array<[BillingStatus, BillingEvent, BillingStatus]> = [
  ['pending', 'gateway_paid', 'paid'],
  ['pending', 'approve', 'paid'],
  ['awaiting_review', 'approve', 'paid'],
  ['pending', 'upload_proof', 'awaiting_review'],
  ['awaiting_review', 'reject', 'pending'],
  ['paid', 'refund', 'refunded'],
  ['pending', 'expire', 'expired'],
  ['pending', 'cancel', 'cancelled'],
];
const EVENTS: BillingEvent[] = [
  'gateway_paid',
  'approve',
  'upload_proof',
  'reject',
  'refund',
  'expire',
  'cancel',
];

describe('billing state machine', () => {
  it.each(DRAWN)('%s --%s--> %s', (from, event, to) => {
    expect(nextBillingStatus(from, event)).toBe(to);
  });

  const undrawn = BILLING_STATUSES.flatMap((from) =>
    EVENTS.filter((event) => !DRAWN.some(([f, e]) => f === from && e === event)).map(
      (event) => [from, event] as const,
    ),
  );

  it.each(undrawn)('refuses %s --%s--> (409)', (from, event) => {
    expect(canTransition(from, event)).toBe(false);
    expect(() => nextBillingStatus(from, event)).toThrow(BillingStateError);
    try {
      nextBillingStatus(from, event);
    } catch (e) {
      expect((e as BillingStateError).status).toBe(409);
    }
  });

  it('never moves a paid billing back (late EXPIRED after PAID)', () => {
    expect(canTransition('paid', 'expire')).toBe(false);
    expect(canTransition('paid', 'gateway_paid')).toBe(false);
  });
});

describe('payable through the gateway', () => {
  it('only a pending gateway billing', () => {
    for (const status of BILLING_STATUSES) {
      expect([status, isGatewayPayable({ method: 'gateway', status })]).toEqual([
        status,
        status === 'pending',
      ]);
      expect(isGatewayPayable({ method: 'manual', status })).toBe(false);
    }
  });

  it('refuses with a 409 that says why', () => {
    expect(() => assertGatewayPayable({ method: 'gateway', status: 'pending' })).not.toThrow();
    expect(() => assertGatewayPayable({ method: 'manual', status: 'pending' })).toThrow(
      'This billing is paid by manual transfer, not through the payment gateway',
    );
    expect(() => assertGatewayPayable({ method: 'gateway', status: 'awaiting_review' })).toThrow(
      'Cannot pay a billing that is awaiting review',
    );
  });
});
