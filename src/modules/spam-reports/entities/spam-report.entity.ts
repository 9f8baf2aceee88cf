import { Column, Entity, JoinColumn, ManyToOne } from 'typeorm';
import { DATETIME } from '../../../database/column-types';
import { BaseEntity } from '../../../database/base.entity';
import { Company } from '../../companies/entities/company.entity';

/** A report that a company's mail was spam, sent by a system that saw it (resources.md "Spam report"). */
@Entity('spam_reports')
export class SpamReport extends BaseEntity {
  @ManyToOne(() => Company, { nullable: false, onDelete: 'CASCADE' })
  @JoinColumn({ name: 'company_id' })
  company: Company;

  @Column({ type: 'integer' })
  companyId: number;

  /** The reporting system (the credential it used). */
  @Column({ type: 'varchar', length: 64 })
  reportedBy: string;

  @Column({ type: 'varchar', length: 998, nullable: true })
  messageId: string | null;

  @Column({ type: 'varchar', length: 320, nullable: true })
  recipient: string | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  reason: string | null;

  @Column({ type: 'double precision', nullable: true })
  score: number | null;

  @Column({ type: DATETIME })
  receivedAt: Date;

  /** SHA-256 of (company, message id, recipient) when a message id is given: a repeated report is one report. */
  @Column({ type: 'varchar', length: 64, nullable: true, unique: true })
  dedupeKey: string | null;
}
