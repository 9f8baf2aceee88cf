import { Column, Entity } from 'typeorm';
import { DATETIME } from '../../../database/column-types';
import { BaseEntity } from '../../../database/base.entity';

export const MAILBOX_SUITES = ['none', 'microsoft365', 'google-workspace'] as const;
export type MailboxSuite = (typeof MAILBOX_SUITES)[number];

export const COMPANY_STATUSES = ['active', 'suspended'] as const;
export type CompanyStatus = (typeof COMPANY_STATUSES)[number];

@Entity('companies')
export class Company extends BaseEntity {
  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Column({ type: 'varchar', length: 200, nullable: true })
  legalName: string | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  taxId: string | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  address: string | null;

  @Column({ type: 'varchar', length: 100, nullable: true })
  city: string | null;

  @Column({ type: 'varchar', length: 2, default: 'ID' })
  country: string;

  @Column({ type: 'varchar', length: 32, nullable: true })
  phone: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true })
  website: string | null;

  @Column({ type: 'varchar', length: 16, default: 'active' })
  status: CompanyStatus;

  @Column({ type: 'varchar', length: 500, nullable: true })
  suspendedReason: string | null;

  @Column({ type: 'varchar', length: 32, unique: true })
  relayUsername: string;

  @Column({ type: 'varchar', length: 255, nullable: true, select: false })
  relayPasswordHash: string | null;

  @Column({ type: 'varchar', length: 36, nullable: true })
  packageUuid: string | null;

  @Column({ type: DATETIME, nullable: true })
  periodStart: Date | null;

  @Column({ type: DATETIME, nullable: true })
  periodEnd: Date | null;

  @Column({ type: 'integer', default: 0 })
  quota: number;

  @Column({ type: 'integer', default: 0 })
  used: number;

  @Column({ type: DATETIME, nullable: true })
  quotaWarnedAt80: Date | null;

  @Column({ type: DATETIME, nullable: true })
  quotaWarnedAt100: Date | null;

  /** SHA-256 of the current script token, for the public script lookup. */
  @Column({ type: 'varchar', length: 64, nullable: true, unique: true, select: false })
  scriptTokenHash: string | null;

  /** The same token encrypted (AES-256-GCM) so the owner can see the script URL again. */
  @Column({ type: 'varchar', length: 500, nullable: true, select: false })
  scriptTokenCipher: string | null;

  @Column({ type: 'varchar', length: 32, default: 'none' })
  mailboxSuite: MailboxSuite;

  /** The Microsoft 365 distribution group the transport rule is scoped to (all senders when null). */
  @Column({ type: 'varchar', length: 256, nullable: true })
  mailboxGroupName: string | null;

  /** IPs / CIDRs that may relay without SMTP auth (mailbox suites). */
  @Column({ type: 'simple-json', default: '[]' })
  allowedIps: string[];

  @Column({ type: 'varchar', length: 64, nullable: true })
  crmAccountId: string | null;
}
