import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { DATETIME } from '../../../database/column-types';
import { WebhookDelivery } from './webhook-delivery.entity';

/** One attempt of a delivery, kept 30 days (platform.md "Delivery"). */
@Entity('webhook_attempts')
@Index('ix_webhook_attempts_delivery', ['deliveryId'])
@Index('ix_webhook_attempts_at', ['at'])
export class WebhookAttempt {
  @PrimaryGeneratedColumn()
  id: number;

  @ManyToOne(() => WebhookDelivery, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'delivery_id' })
  delivery: WebhookDelivery;

  @Column({ type: 'integer' })
  deliveryId: number;

  @Column({ type: DATETIME })
  at: Date;

  /** The HTTP status, or null when no answer came (`error` says why). */
  @Column({ type: 'integer', nullable: true })
  status: number | null;

  @Column({ type: 'varchar', length: 300, nullable: true })
  error: string | null;

  @Column({ type: 'integer' })
  ms: number;

  /** The first 1 KB of the answer body. */
  @Column({ type: 'varchar', length: 1024, default: '' })
  body: string;
}
