import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * The deliverability roll-up: how many clean records a company has by UTC hour of their last
 * event, sender domain, mailbox provider, current status and bounce class ('' where a record has
 * none). Each rebuild moves its records from their old cells to their new ones in its own
 * transaction; the provider and bounce reports and the hourly alerts read these cells, never the
 * records.
 */
@Entity('deliverability_hourly')
@Index('ix_deliverability_hourly_hour', ['hour'])
export class DeliverabilityHour {
  /** 0: records of no known company. */
  @PrimaryColumn({ type: 'integer' })
  companyId: number;

  /** `YYYY-MM-DDTHH`, UTC. */
  @PrimaryColumn({ type: 'varchar', length: 13 })
  hour: string;

  /** '' for the null sender. */
  @PrimaryColumn({ type: 'varchar', length: 255 })
  senderDomain: string;

  @PrimaryColumn({ type: 'varchar', length: 16 })
  provider: string;

  @PrimaryColumn({ type: 'varchar', length: 16 })
  status: string;

  @PrimaryColumn({ type: 'varchar', length: 8 })
  bounceType: string;

  @PrimaryColumn({ type: 'varchar', length: 32 })
  bounceCategory: string;

  @PrimaryColumn({ type: 'varchar', length: 64 })
  bounceRule: string;

  /** The writer's shard (TransactionService.counterShard): readers sum a cell's shards. */
  @PrimaryColumn({ type: 'integer', default: 0 })
  shard: number;

  @Column({ type: 'integer', default: 0 })
  records: number;
}
