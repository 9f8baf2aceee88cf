import { Column, Entity, PrimaryColumn } from 'typeorm';
import { DATETIME } from '../../../database/column-types';
import type { BounceCategory, BounceType } from '../../deliverability/bounce-classifier';
import type { MailboxProvider } from '../../deliverability/mailbox-providers';
import type { CleanEvent, CleanRecord, CleanStatus } from '../clean-record';

const json = {
  to: (value: CleanEvent[] | undefined) => (value === undefined ? undefined : JSON.stringify(value)),
  from: (value: string | null) => (value ? (JSON.parse(value) as CleanEvent[]) : []),
};

/**
 * The SQL clean-log index's row: one clean record (see clean-record.ts), under the record's own
 * property names, so a record is written and read back as it is. Two columns keep the names they
 * had before the record's: `from` is stored as `sender`, `to` as `recipient`.
 */
@Entity('clean_logs')
export class CleanLog implements CleanRecord {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  id: string;

  @Column({ type: 'integer', nullable: true })
  companyId: number | null;

  @Column({ type: 'varchar', length: 36, nullable: true })
  companyUuid: string | null;

  @Column({ type: 'varchar', length: 255 })
  host: string;

  @Column({ type: 'varchar', length: 64, nullable: true })
  queueId: string | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  messageId: string | null;

  @Column({ type: 'varchar', length: 320, name: 'sender' })
  from: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  senderDomain: string | null;

  @Column({ type: 'varchar', length: 320, name: 'recipient' })
  to: string;

  @Column({ type: 'varchar', length: 320, nullable: true })
  origTo: string | null;

  @Column({ type: 'varchar', length: 16 })
  status: CleanStatus;

  @Column({ type: 'varchar', length: 16, nullable: true })
  dsn: string | null;

  @Column({ type: 'text', nullable: true })
  response: string | null;

  @Column({ type: 'varchar', length: 300, nullable: true })
  relay: string | null;

  @Column({ type: 'real', nullable: true })
  delay: number | null;

  @Column({ type: 'integer', nullable: true })
  size: number | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  clientIp: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true })
  saslUsername: string | null;

  @Column({ type: 'varchar', length: 200, nullable: true })
  remoteQueueId: string | null;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  @Column({ type: 'boolean', default: false })
  opened: boolean;

  @Column({ type: 'boolean', default: false })
  clicked: boolean;

  @Column({ type: DATETIME })
  firstSeenAt: Date;

  @Column({ type: DATETIME })
  lastEventAt: Date;

  @Column({ type: 'text', transformer: json })
  events: CleanEvent[];

  @Column({ type: 'varchar', length: 36, nullable: true })
  emailId: string | null;

  @Column({ type: 'varchar', length: 16, nullable: true })
  provider: MailboxProvider | null;

  @Column({ type: 'varchar', length: 8, nullable: true })
  bounceType: BounceType | null;

  @Column({ type: 'varchar', length: 32, nullable: true })
  bounceCategory: BounceCategory | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  bounceRule: string | null;
}
