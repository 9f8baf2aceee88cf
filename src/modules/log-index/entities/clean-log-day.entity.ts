import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * The SQL index's daily roll-up: how many records (and of them opened, clicked) a company has by
 * UTC day of their last event, sender domain and current status. Each record write moves its
 * record from its old cell to its new one, in the same transaction.
 */
@Entity('clean_log_daily')
export class CleanLogDay {
  /** 0: records of no known company. */
  @PrimaryColumn({ type: 'integer' })
  companyId: number;

  /** `YYYY-MM-DD`, UTC. */
  @PrimaryColumn({ type: 'varchar', length: 10 })
  day: string;

  /** '' for the null sender. */
  @PrimaryColumn({ type: 'varchar', length: 255 })
  senderDomain: string;

  @PrimaryColumn({ type: 'varchar', length: 16 })
  status: string;

  /** The writer's shard (TransactionService.counterShard): readers sum a cell's shards. */
  @PrimaryColumn({ type: 'integer', default: 0 })
  shard: number;

  @Column({ type: 'integer', default: 0 })
  records: number;

  @Column({ type: 'integer', default: 0 })
  opened: number;

  @Column({ type: 'integer', default: 0 })
  clicked: number;
}
