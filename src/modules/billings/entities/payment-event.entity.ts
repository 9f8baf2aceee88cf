import { Column, Entity } from 'typeorm';
import { InboundEvent } from '../../../database/inbound-events';

export const PAYMENT_OUTCOMES = ['applied', 'duplicate', 'ignored', 'mismatch'] as const;
export type PaymentOutcome = (typeof PAYMENT_OUTCOMES)[number];

/**
 * Every payment-gateway callback, stored raw before it is applied (InboundEventInbox).
 * `eventKey` is the invoice id + status; `outcome` is a PaymentOutcome once applied.
 */
@Entity('payment_events')
export class PaymentEvent extends InboundEvent {
  @Column({ type: 'varchar', length: 64, nullable: true })
  externalId: string | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  gatewayInvoiceId: string | null;

  @Column({ type: 'varchar', length: 32, nullable: true })
  status: string | null;

  @Column({ type: 'varchar', length: 36, nullable: true })
  billingUuid: string | null;
}
