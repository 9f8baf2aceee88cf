import { Column, Entity, JoinColumn, ManyToOne } from 'typeorm';
import { BINARY, bigintAsNumber, DATETIME } from '../../../database/column-types';
import { BaseEntity } from '../../../database/base.entity';
import { Company } from '../../companies/entities/company.entity';
import { Package } from '../../packages/entities/package.entity';

export const BILLING_STATUSES = [
  'pending',
  'awaiting_review',
  'paid',
  'refunded',
  'expired',
  'cancelled',
] as const;
export type BillingStatus = (typeof BILLING_STATUSES)[number];
export const BILLING_METHODS = ['gateway', 'manual'] as const;
export type BillingMethod = (typeof BILLING_METHODS)[number];

/** An invoice for one package, with a snapshot of the package as it was when the invoice was made. */
@Entity('billings')
export class Billing extends BaseEntity {
  /** Human-readable and unique, e.g. INV/2026/11/000123. */
  @Column({ type: 'varchar', length: 32, unique: true })
  number: string;

  @ManyToOne(() => Company, { nullable: false, onDelete: 'CASCADE' })
  @JoinColumn({ name: 'company_id' })
  company: Company;

  @Column({ type: 'integer' })
  companyId: number;

  @ManyToOne(() => Package, { nullable: false })
  @JoinColumn({ name: 'package_id' })
  package: Package;

  @Column({ type: 'integer' })
  packageId: number;

  @Column({ type: 'varchar', length: 100 })
  packageName: string;

  @Column({ type: 'integer' })
  packageQuota: number;

  @Column({ type: 'integer' })
  packageDurationDays: number;

  @Column({ type: 'bigint', transformer: bigintAsNumber })
  amount: number;

  @Column({ type: 'varchar', length: 3 })
  currency: string;

  @Column({ type: 'varchar', length: 16 })
  method: BillingMethod;

  @Column({ type: 'varchar', length: 16, default: 'pending' })
  status: BillingStatus;

  /** What the gateway echoes back as `external_id` (the invoice number). */
  @Column({ type: 'varchar', length: 64, unique: true })
  externalId: string;

  @Column({ type: 'varchar', length: 64, nullable: true })
  gatewayInvoiceId: string | null;

  @Column({ type: 'varchar', length: 1000, nullable: true })
  paymentUrl: string | null;

  @Column({ type: DATETIME, nullable: true })
  gatewayExpiresAt: Date | null;

  @Column({ type: DATETIME })
  expiresAt: Date;

  @Column({ type: DATETIME, nullable: true })
  paidAt: Date | null;

  @Column({ type: 'bigint', nullable: true, transformer: bigintAsNumber })
  paidAmount: number | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  paymentMethod: string | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  paymentChannel: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true })
  proofFileName: string | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  proofFileType: string | null;

  @Column({ type: 'integer', nullable: true })
  proofFileSize: number | null;

  /** The uploaded proof itself; never selected unless asked for. */
  @Column({ type: BINARY, nullable: true, select: false })
  proofContent: Buffer | null;

  @Column({ type: DATETIME, nullable: true })
  proofUploadedAt: Date | null;

  @Column({ type: 'varchar', length: 1000, nullable: true })
  rejectedReason: string | null;

  @Column({ type: 'varchar', length: 1000, nullable: true })
  reviewNote: string | null;

  @Column({ type: 'varchar', length: 1000, nullable: true })
  refundReason: string | null;

  @Column({ type: 'varchar', length: 36, nullable: true })
  reviewedByAdminUuid: string | null;

  @Column({ type: DATETIME, nullable: true })
  reminderSentAt: Date | null;
}
