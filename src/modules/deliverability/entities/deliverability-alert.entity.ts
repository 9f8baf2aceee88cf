import { Column, Entity, Index, JoinColumn, ManyToOne } from 'typeorm';
import { DATETIME } from '../../../database/column-types';
import { BaseEntity } from '../../../database/base.entity';
import { Company } from '../../companies/entities/company.entity';

export const ALERT_KINDS = ['complaint-rate', 'hard-bounce-rate', 'blocked'] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];
export const ALERT_LEVELS = ['warning', 'critical'] as const;
export type AlertLevel = (typeof ALERT_LEVELS)[number];
export const ALERT_STATES = ['open', 'resolved'] as const;
export type AlertState = (typeof ALERT_STATES)[number];

/** An alert of deliverability.md "Alerts": one company, one mailbox provider, one kind. */
@Entity('deliverability_alerts')
@Index('ix_deliverability_alerts_company', ['companyId', 'openedAt'])
@Index('ix_deliverability_alerts_open', ['companyId', 'provider', 'kind'], {
  unique: true,
  where: 'resolved_at IS NULL',
})
export class DeliverabilityAlert extends BaseEntity {
  @ManyToOne(() => Company, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'company_id' })
  company?: Company;

  @Column({ type: 'integer' })
  companyId: number;

  @Column({ type: 'varchar', length: 16 })
  provider: string;

  @Column({ type: 'varchar', length: 32 })
  kind: AlertKind;

  @Column({ type: 'varchar', length: 16 })
  level: AlertLevel;

  /** The rate when last evaluated, as a fraction (0.012 = 1.2 %). */
  @Column({ type: 'real' })
  value: number;

  /** The threshold of its level, as a fraction. */
  @Column({ type: 'real' })
  threshold: number;

  @Column({ type: DATETIME })
  openedAt: Date;

  @Column({ type: DATETIME, nullable: true })
  resolvedAt: Date | null;

  /** The last evaluation at or above the warning threshold: 24 hours below it resolve the alert. */
  @Column({ type: DATETIME })
  lastAboveAt: Date;

  @Column({ type: 'varchar', length: 500, nullable: true })
  sampleResponse: string | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  sampleRule: string | null;
}
