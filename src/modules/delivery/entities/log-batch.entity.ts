import { Column, Entity } from 'typeorm';
import { InboundEvent } from '../../../database/inbound-events';

/** One body a log shipper posted, stored before its lines are applied (the inbound-callback pattern). */
@Entity('log_batches')
export class LogBatch extends InboundEvent {
  @Column({ type: 'varchar', length: 100 })
  contentType: string;

  /** Clean records the batch created or changed, once applied. */
  @Column({ type: 'integer', nullable: true })
  records: number | null;
}
