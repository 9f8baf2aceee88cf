import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { DATETIME } from '../../../database/column-types';

/**
 * What Postfix said of one queued message (host + queue id), gathered from lines that may
 * arrive in any order and in any batch: kept so a restart between batches loses nothing.
 */
@Entity('postfix_queues')
export class PostfixQueue {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 255 })
  host: string;

  @Column({ type: 'varchar', length: 64 })
  queueId: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  clientHost: string | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  clientIp: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true })
  saslUsername: string | null;

  /** Without angle brackets. */
  @Column({ type: 'varchar', length: 500, nullable: true })
  messageId: string | null;

  /** The envelope sender; '' is the null sender. */
  @Column({ type: 'varchar', length: 320, nullable: true })
  sender: string | null;

  @Column({ type: 'integer', nullable: true })
  size: number | null;

  @Column({ type: DATETIME, nullable: true })
  expiredAt: Date | null;

  @Column({ type: DATETIME, nullable: true })
  removedAt: Date | null;

  @Column({ type: DATETIME })
  firstSeenAt: Date;

  /**
   * The sending company, decided once from the queue's own facts when its `client=` line is
   * known (null with `attributedAt` set: nobody could be identified). Never moved afterwards.
   */
  @Column({ type: 'integer', nullable: true })
  companyId: number | null;

  /** When the company was decided; null while the queue's `client=` line has not arrived. */
  @Column({ type: DATETIME, nullable: true })
  attributedAt: Date | null;
}
