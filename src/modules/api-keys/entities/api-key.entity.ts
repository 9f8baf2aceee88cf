import { Column, Entity, Index, JoinColumn, ManyToOne } from 'typeorm';
import { BaseEntity } from '../../../database/base.entity';
import { DATETIME } from '../../../database/column-types';
import { Company } from '../../companies/entities/company.entity';

export const API_KEY_SCOPES = ['full', 'sending', 'read'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/**
 * A company's key for its own software (platform.md "API keys"). The secret is shown once, when
 * the key is made; only its SHA-256 digest is kept, and the key is found by it.
 */
@Entity('api_keys')
@Index('ix_api_keys_company', ['companyId', 'revokedAt'])
export class ApiKey extends BaseEntity {
  @ManyToOne(() => Company, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'company_id' })
  company: Company;

  @Column({ type: 'integer' })
  companyId: number;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ type: 'varchar', length: 16 })
  scope: ApiKeyScope;

  /** Names of the company's domains the key may send from; empty: every verified domain. */
  @Column({ type: 'simple-json', default: '[]' })
  domains: string[];

  /** Networks the key may be used from (normalised like a company's allowed IPs); empty: any. */
  @Column({ type: 'simple-json', default: '[]' })
  allowedIps: string[];

  /** Hex SHA-256 of the whole key. */
  @Column({ type: 'varchar', length: 64, unique: true, select: false })
  digest: string;

  /** The key's first 12 characters (`rk_` and 9 more): the only part ever shown again. */
  @Column({ type: 'varchar', length: 12 })
  hint: string;

  @Column({ type: DATETIME, nullable: true })
  expiresAt: Date | null;

  /** Written at most once a minute per key. */
  @Column({ type: DATETIME, nullable: true })
  lastUsedAt: Date | null;

  @Column({ type: 'varchar', length: 45, nullable: true })
  lastUsedIp: string | null;

  @Column({ type: 'varchar', length: 36, nullable: true })
  createdByUserUuid: string | null;

  @Column({ type: DATETIME, nullable: true })
  revokedAt: Date | null;
}
