import { Column, Entity, JoinColumn, ManyToOne } from 'typeorm';
import { DATETIME } from '../../../database/column-types';
import { BaseEntity } from '../../../database/base.entity';
import { Company } from '../../companies/entities/company.entity';

export const SUPPRESSION_REASONS = [
  'hard_bounce',
  'complaint',
  'unsubscribe',
  'manual',
  'spam_report',
] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];
/** The reasons a company's own users may give when they add addresses. */
export const USER_SUPPRESSION_REASONS = ['manual', 'unsubscribe'] as const;
export type UserSuppressionReason = (typeof USER_SUPPRESSION_REASONS)[number];
export const SUPPRESSION_SOURCES = ['mail_provider', 'log', 'user', 'admin', 'spam_report'] as const;
export type SuppressionSource = (typeof SUPPRESSION_SOURCES)[number];

/**
 * An address the relay must not deliver to: for one company, or for every company (the global
 * list, `companyId` null, kept by admins). Unique per (company or global, email).
 */
@Entity('suppression_entries')
export class SuppressionEntry extends BaseEntity {
  @ManyToOne(() => Company, { nullable: true, onDelete: 'CASCADE' })
  @JoinColumn({ name: 'company_id' })
  company: Company | null;

  @Column({ type: 'integer', nullable: true })
  companyId: number | null;

  /** Trimmed and lower-cased. */
  @Column({ type: 'varchar', length: 320 })
  email: string;

  @Column({ type: 'varchar', length: 16 })
  reason: SuppressionReason;

  @Column({ type: 'varchar', length: 16 })
  source: SuppressionSource;

  @Column({ type: 'varchar', length: 500, nullable: true })
  detail: string | null;

  /** Null: never expires. An expired entry no longer suppresses. */
  @Column({ type: DATETIME, nullable: true })
  expiresAt: Date | null;
}
