import { Column, Entity, JoinColumn, ManyToOne } from 'typeorm';
import { DATETIME } from '../../../database/column-types';
import { BaseEntity } from '../../../database/base.entity';
import { Company } from '../../companies/entities/company.entity';

export const DOMAIN_STATUSES = ['pending', 'verified', 'failed'] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];

export const RECORD_PURPOSES = ['ownership', 'spf', 'dkim', 'dmarc', 'return-path'] as const;
export type RecordPurpose = (typeof RECORD_PURPOSES)[number];
export const RECORD_STATUSES = ['ok', 'missing', 'invalid', 'unchecked'] as const;
export type RecordStatus = (typeof RECORD_STATUSES)[number];

/** One DNS record the customer publishes, with the result of its last check (resources.md). */
export interface DnsRecord {
  purpose: RecordPurpose;
  type: 'TXT' | 'CNAME';
  /** Fully qualified, e.g. `rs202611._domainkey.acme.co.id`. */
  host: string;
  value: string;
  required: boolean;
  status: RecordStatus;
  detail: string;
  /** ISO 8601, or null before the first check. */
  checkedAt: string | null;
}

/** A sender domain of a company: verified when its ownership, SPF and DKIM records are right. */
@Entity('domains')
export class Domain extends BaseEntity {
  @ManyToOne(() => Company, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'company_id' })
  company: Company;

  @Column({ type: 'integer' })
  companyId: number;

  /** Lower-case, IDN as punycode. */
  @Column({ type: 'varchar', length: 253 })
  name: string;

  @Column({ type: 'varchar', length: 16, default: 'pending' })
  status: DomainStatus;

  /** Published as `relay-verification=<token>`. */
  @Column({ type: 'varchar', length: 64 })
  verificationToken: string;

  @Column({ type: 'varchar', length: 32 })
  dkimSelector: string;

  /** Base64 DER (SubjectPublicKeyInfo), as published in `p=`. */
  @Column({ type: 'text' })
  dkimPublicKey: string;

  /** PKCS#8 PEM, AES-256-GCM encrypted with ENCRYPTION_KEY. */
  @Column({ type: 'text', select: false })
  dkimPrivateKey: string;

  @Column({ type: 'simple-json', default: '[]' })
  records: DnsRecord[];

  @Column({ type: DATETIME, nullable: true })
  lastCheckedAt: Date | null;

  @Column({ type: DATETIME, nullable: true })
  verifiedAt: Date | null;
}
