import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { DATETIME } from '../../../database/column-types';

/** One `to=` line (a delivery attempt) or one NOQUEUE reject; a line seen again is the same row (`lineKey`). */
@Entity('postfix_deliveries')
export class PostfixDelivery {
  @PrimaryGeneratedColumn()
  id: number;

  /** SHA-256 of the host and the line's facts: what makes a line seen twice the same. */
  @Column({ type: 'varchar', length: 64, unique: true })
  lineKey: string;

  @Column({ type: 'varchar', length: 255 })
  host: string;

  /** Null for a NOQUEUE reject. */
  @Column({ type: 'varchar', length: 64, nullable: true })
  queueId: string | null;

  @Column({ type: 'varchar', length: 320 })
  recipient: string;

  @Column({ type: 'varchar', length: 320, nullable: true })
  origTo: string | null;

  @Column({ type: DATETIME })
  at: Date;

  /** sent | deferred | bounced | expired | rejected */
  @Column({ type: 'varchar', length: 16 })
  status: string;

  @Column({ type: 'varchar', length: 16, nullable: true })
  dsn: string | null;

  @Column({ type: 'varchar', length: 300, nullable: true })
  relay: string | null;

  @Column({ type: 'real', nullable: true })
  delay: number | null;

  @Column({ type: 'text', nullable: true })
  response: string | null;

  @Column({ type: 'varchar', length: 200, nullable: true })
  remoteQueueId: string | null;

  /** NOQUEUE rejects only. */
  @Column({ type: 'varchar', length: 320, nullable: true })
  sender: string | null;

  /** NOQUEUE rejects only. */
  @Column({ type: 'varchar', length: 64, nullable: true })
  clientIp: string | null;
}
