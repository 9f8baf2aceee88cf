import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { DATETIME } from '../../../database/column-types';

export const PAYMENT_OUTCOMES = ['applied', 'duplicate', 'ignored', 'mismatch'] as const;
export type PaymentOutcome = (typeof PAYMENT_OUTCOMES)[number];

/**
 * Every payment-gateway callback, stored raw before it is applied. `eventKey` (invoice id +
 * status) and `webhookId` make a duplicate delivery a no-op; `outcome` stays null until the
 * event has been applied, so the retry job finds what failed half-way.
 */
@Entity('payment_events')
export class PaymentEvent {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 200, unique: true })
  eventKey: string;

  @Column({ type: 'varchar', length: 200, nullable: true, unique: true })
  webhookId: string | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  externalId: string | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  gatewayInvoiceId: string | null;

  @Column({ type: 'varchar', length: 32, nullable: true })
  status: string | null;

  @Column({ type: 'text' })
  raw: string;

  @Column({ type: 'varchar', length: 16, nullable: true })
  outcome: PaymentOutcome | null;

  @Column({ type: 'varchar', length: 36, nullable: true })
  billingUuid: string | null;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  @Column({ type: 'varchar', length: 1000, nullable: true })
  lastError: string | null;

  @Column({ type: DATETIME, nullable: true })
  appliedAt: Date | null;

  @CreateDateColumn({ type: DATETIME })
  createdAt: Date;
}
