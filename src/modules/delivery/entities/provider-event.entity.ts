import { Column, Entity } from 'typeorm';
import { DATETIME } from '../../../database/column-types';
import { InboundEvent } from '../../../database/inbound-events';

/**
 * One mail-provider delivery event, normalised, stored once (deduped on its key: the provider's
 * event id, else a hash of the raw event) and applied to its clean record. Its outcome:
 * `applied` (matched to its record), `waiting` (its message is not known yet: applied when the
 * log lines arrive), `ambiguous` (its Message-ID names records of more than one company: kept,
 * never applied), null while unapplied (the retry job's).
 */
@Entity('provider_events')
export class ProviderEvent extends InboundEvent {
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

  /** The clean record it was applied to; null while its message is not known yet. */
  @Column({ type: 'varchar', length: 64, nullable: true })
  recordId: string | null;
}
