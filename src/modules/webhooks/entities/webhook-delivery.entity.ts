import { Column, Entity, Index, JoinColumn, ManyToOne } from 'typeorm';
import { BaseEntity } from '../../../database/base.entity';
import { DATETIME } from '../../../database/column-types';
import { WebhookEvent } from './webhook-event.entity';
import { Webhook } from './webhook.entity';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One event for one endpoint: attempted until delivered or given up (platform.md "Delivery"). */
@Entity('webhook_deliveries')
@Index('ix_webhook_deliveries_pending', ['webhookId', 'nextAttemptAt', 'id'], { where: "status = 'pending'" })
@Index('ix_webhook_deliveries_webhook', ['webhookId', 'createdAt'])
@Index('ix_webhook_deliveries_record', ['webhookId', 'recordId', 'seq'])
export class WebhookDelivery extends BaseEntity {
  @ManyToOne(() => Webhook, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'webhook_id' })
  webhook: Webhook;

  @Column({ type: 'integer' })
  webhookId: number;

  @ManyToOne(() => WebhookEvent, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'event_id' })
  event: WebhookEvent;

  @Column({ type: 'integer' })
  eventId: number;

  @Column({ type: 'varchar', length: 40 })
  type: string;

  /** The event's record and seq, kept here so that a record's later events wait behind an earlier one. */
  @Column({ type: 'varchar', length: 64, nullable: true })
  recordId: string | null;

  @Column({ type: 'integer', nullable: true })
  seq: number | null;

  @Column({ type: 'varchar', length: 16, default: 'pending' })
  status: DeliveryStatus;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  /** When it is due (pending); while an attempt is in flight, when its claim lapses. */
  @Column({ type: DATETIME, nullable: true })
  nextAttemptAt: Date | null;

  /** The claim of the attempt in flight (a random id): only its claimer records its outcome. */
  @Column({ type: 'varchar', length: 36, nullable: true })
  claim: string | null;

  @Column({ type: DATETIME, nullable: true })
  lastAttemptAt: Date | null;

  @Column({ type: 'integer', nullable: true })
  lastStatus: number | null;

  @Column({ type: 'varchar', length: 300, nullable: true })
  lastError: string | null;

  @Column({ type: 'integer', nullable: true })
  lastMs: number | null;

  @Column({ type: 'varchar', length: 1024, nullable: true })
  lastBody: string | null;
}
