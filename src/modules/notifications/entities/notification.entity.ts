import { Column, Entity } from 'typeorm';
import { DATETIME } from '../../../database/column-types';
import { BaseEntity } from '../../../database/base.entity';

export const NOTIFICATION_TYPES = [
  'billing.paid',
  'billing.rejected',
  'billing.expiring',
  'quota.80',
  'quota.100',
  'domain.verified',
  'domain.failed',
  'spam.reported',
  'company.suspended',
  'company.registered',
  'billing.proof_uploaded',
  'billing.amount_mismatch',
  'broadcast',
  'webhook.disabled',
  'deliverability.alert',
] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** One row per recipient: a user or an admin. */
@Entity('notifications')
export class Notification extends BaseEntity {
  @Column({ type: 'integer', nullable: true })
  userId: number | null;

  @Column({ type: 'integer', nullable: true })
  adminId: number | null;

  @Column({ type: 'varchar', length: 40 })
  type: NotificationType;

  @Column({ type: 'varchar', length: 200 })
  title: string;

  @Column({ type: 'varchar', length: 5000 })
  body: string;

  /** Small JSON: links to the resource (e.g. `{ billingUuid }`). */
  @Column({ type: 'simple-json', nullable: true })
  data: Record<string, unknown> | null;

  @Column({ type: DATETIME, nullable: true })
  readAt: Date | null;
}
