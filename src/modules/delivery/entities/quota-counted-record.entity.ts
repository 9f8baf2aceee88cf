import { Column, Entity, PrimaryColumn } from 'typeorm';
import { DATETIME } from '../../../database/column-types';

/** A clean record already counted against its company's quota: the row that makes "+1 exactly once" hold. */
@Entity('quota_counted_records')
export class QuotaCountedRecord {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  recordId: string;

  @Column({ type: 'integer' })
  companyId: number;

  @Column({ type: DATETIME })
  countedAt: Date;
}
