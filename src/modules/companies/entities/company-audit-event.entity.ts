import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { DATETIME } from '../../../database/column-types';

/** What an admin did to a company (status, quota or period override, package assigned without payment, …). */
@Entity('company_audit_events')
export class CompanyAuditEvent {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'integer' })
  companyId: number;

  @Column({ type: 'varchar', length: 36, nullable: true })
  adminUuid: string | null;

  @Column({ type: 'varchar', length: 64 })
  action: string;

  @Column({ type: 'simple-json', nullable: true })
  detail: Record<string, unknown> | null;

  @CreateDateColumn({ type: DATETIME })
  createdAt: Date;
}
