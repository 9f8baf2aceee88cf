import { Column, Entity, Index, JoinColumn, ManyToOne } from 'typeorm';
import { BaseEntity } from '../../../database/base.entity';
import { DATETIME } from '../../../database/column-types';
import { Company } from '../../companies/entities/company.entity';

export const WEBHOOK_DISABLED_REASONS = ['manual', 'failing', 'gone'] as const;
export type WebhookDisabledReason = (typeof WEBHOOK_DISABLED_REASONS)[number];

/** An endpoint of a company that receives its events (platform.md "Event webhooks"). */
@Entity('webhooks')
@Index('ix_webhooks_company', ['companyId'])
export class Webhook extends BaseEntity {
  @ManyToOne(() => Company, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'company_id' })
  company: Company;

  @Column({ type: 'integer' })
  companyId: number;

  @Column({ type: 'varchar', length: 2048 })
  url: string;

  @Column({ type: 'varchar', length: 500, nullable: true })
  description: string | null;

  /** Event types, or `["*"]`. */
  @Column({ type: 'simple-json' })
  events: string[];

  /** Sender domains whose mail events it receives; empty: all. */
  @Column({ type: 'simple-json', default: '[]' })
  domains: string[];

  @Column({ type: 'boolean', default: true })
  enabled: boolean;

  @Column({ type: 'varchar', length: 16, nullable: true })
  disabledReason: WebhookDisabledReason | null;

  /** `whsec_…`, AES-256-GCM encrypted with ENCRYPTION_KEY. */
  @Column({ type: 'text', select: false })
  secret: string;

  /** The secret before the last rotation (encrypted), signing beside the new one until `previousSecretUntil`. */
  @Column({ type: 'text', nullable: true, select: false })
  previousSecret: string | null;

  @Column({ type: DATETIME, nullable: true })
  previousSecretUntil: Date | null;

  @Column({ type: DATETIME, nullable: true })
  lastSuccessAt: Date | null;

  @Column({ type: DATETIME, nullable: true })
  lastFailureAt: Date | null;

  /** The first failure since the last success; cleared by a success or by enabling it again. */
  @Column({ type: DATETIME, nullable: true })
  failingSince: Date | null;
}
