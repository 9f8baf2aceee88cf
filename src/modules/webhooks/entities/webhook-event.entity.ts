import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { DATETIME } from '../../../database/column-types';

/**
 * One event of a company (platform.md "Event types and payload"), written in the transaction of
 * the change that made it; its deliveries are written with it. The same fact arriving twice has
 * the same `factKey` and makes no second event.
 */
@Entity('webhook_events')
@Index('ix_webhook_events_record', ['recordId'])
export class WebhookEvent {
  @PrimaryGeneratedColumn()
  id: number;

  /** `evt_…`: the `webhook-id` header, the same on every attempt. */
  @Column({ type: 'varchar', length: 40, unique: true })
  eventId: string;

  @Column({ type: 'integer' })
  companyId: number;

  @Column({ type: 'varchar', length: 40 })
  type: string;

  /** The JSON body sent: `{ type, timestamp, data }`. */
  @Column({ type: 'text' })
  payload: string;

  /** The clean record the event is about (its `seq` numbers the record's events), if any. */
  @Column({ type: 'varchar', length: 64, nullable: true })
  recordId: string | null;

  @Column({ type: 'integer', nullable: true })
  seq: number | null;

  /** Hex SHA-256 naming the fact, unique: a fact arriving twice makes one event. */
  @Column({ type: 'varchar', length: 64, nullable: true, unique: true })
  factKey: string | null;

  @CreateDateColumn({ type: DATETIME })
  createdAt: Date;
}
