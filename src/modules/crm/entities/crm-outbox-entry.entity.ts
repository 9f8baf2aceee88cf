import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { DATETIME } from '../../../database/column-types';

/**
 * A company to upsert into the CRM, written in the registration transaction so a restart or a
 * CRM outage loses nothing; `syncedAt` once the CRM has the Account and its owner Contact.
 */
@Entity('crm_outbox')
export class CrmOutboxEntry {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'integer', unique: true })
  companyId: number;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  @Column({ type: DATETIME })
  nextAttemptAt: Date;

  @Column({ type: 'varchar', length: 500, nullable: true })
  lastError: string | null;

  @Column({ type: DATETIME, nullable: true })
  syncedAt: Date | null;

  @CreateDateColumn({ type: DATETIME })
  createdAt: Date;

  @UpdateDateColumn({ type: DATETIME })
  updatedAt: Date;
}
