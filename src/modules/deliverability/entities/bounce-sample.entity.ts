import { Column, Entity, PrimaryColumn } from 'typeorm';
import { DATETIME } from '../../../database/column-types';

/** The latest reply a bounce rule matched for a company: what the reports and alerts show as its sample. */
@Entity('bounce_samples')
export class BounceSample {
  /** 0: records of no known company. */
  @PrimaryColumn({ type: 'integer' })
  companyId: number;

  @PrimaryColumn({ type: 'varchar', length: 64 })
  rule: string;

  /** The writer's shard (TransactionService.counterShard): readers take the latest of a rule's shards. */
  @PrimaryColumn({ type: 'integer', default: 0 })
  shard: number;

  @Column({ type: 'varchar', length: 500 })
  response: string;

  @Column({ type: DATETIME })
  at: Date;
}
