import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { DATETIME } from '../../../database/column-types';

/** One mail-provider delivery event, normalised, stored once (deduped on its key) and applied to its clean record. */
@Entity('provider_events')
export class ProviderEvent {
  @PrimaryGeneratedColumn()
  id: number;

  /** The provider's event id, else a hash of the raw event. */
  @Column({ type: 'varchar', length: 200, unique: true })
  eventKey: string;

  @Column({ type: 'varchar', length: 16 })
  provider: string;

  @Column({ type: 'varchar', length: 16 })
  type: string;

  @Column({ type: 'varchar', length: 320 })
  recipient: string;

  @Column({ type: 'varchar', length: 500, nullable: true })
  messageId: string | null;

  @Column({ type: 'varchar', length: 200, nullable: true })
  providerMessageId: string | null;

  @Column({ type: DATETIME })
  at: Date;

  @Column({ type: 'varchar', length: 8, nullable: true })
  bounceKind: string | null;

  @Column({ type: 'varchar', length: 16, nullable: true })
  dsn: string | null;

  @Column({ type: 'varchar', length: 1000, nullable: true })
  reason: string | null;

  @Column({ type: 'text' })
  raw: string;

  /** The clean record it was applied to; null while its message is not known yet. */
  @Column({ type: 'varchar', length: 64, nullable: true })
  recordId: string | null;

  /** Why applying it failed, for the retry job; null once applied, or while it waits for its message. */
  @Column({ type: 'varchar', length: 1000, nullable: true })
  applyError: string | null;

  @CreateDateColumn({ type: DATETIME })
  createdAt: Date;
}
