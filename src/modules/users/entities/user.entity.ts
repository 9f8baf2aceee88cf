import { Column, Entity, JoinColumn, ManyToOne, OneToOne } from 'typeorm';
import { DATETIME } from '../../../database/column-types';
import { BaseEntity } from '../../../database/base.entity';
import { Company } from '../../companies/entities/company.entity';
import { Contact } from './contact.entity';

export const USER_STATUSES = ['pending', 'active', 'suspended'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];
export const COMPANY_ROLES = ['owner', 'member'] as const;
export type CompanyRole = (typeof COMPANY_ROLES)[number];

@Entity('users')
export class User extends BaseEntity {
  @Column({ type: 'varchar', length: 254, unique: true })
  email: string;

  /** Null for an invited member who has not set a password yet. */
  @Column({ type: 'varchar', length: 255, nullable: true, select: false })
  passwordHash: string | null;

  @Column({ type: 'varchar', length: 16, default: 'pending' })
  status: UserStatus;

  @Column({ type: DATETIME, nullable: true })
  emailVerifiedAt: Date | null;

  @Column({ type: DATETIME, nullable: true })
  lastLoginAt: Date | null;

  /** Incremented by every password change; reset and invitation tokens carry it (single use). */
  @Column({ type: 'integer', default: 0 })
  passwordVersion: number;

  /** When the password last changed (change, reset, accepted invitation): refresh tokens issued before are refused. */
  @Column({ type: DATETIME, nullable: true })
  passwordChangedAt: Date | null;

  @Column({ type: 'varchar', length: 16, default: 'owner' })
  companyRole: CompanyRole;

  @ManyToOne(() => Company, { nullable: false, onDelete: 'CASCADE' })
  @JoinColumn({ name: 'company_id' })
  company: Company;

  @Column({ type: 'integer' })
  companyId: number;

  @OneToOne(() => Contact, { nullable: false })
  @JoinColumn({ name: 'contact_id' })
  contact: Contact;

  @Column({ type: 'integer' })
  contactId: number;
}
