import { Column, Entity, Index, JoinColumn, ManyToOne } from 'typeorm';
import { BaseEntity } from '../../../database/base.entity';
import { DATETIME } from '../../../database/column-types';
import { Company } from '../../companies/entities/company.entity';

export const EMAIL_STATUSES = ['scheduled', 'queued', 'submitted', 'failed', 'canceled'] as const;
/**
 * `scheduled` waits for its time, `queued` for the relay; `submitted` the relay accepted it (its
 * recipients' fates are in the clean records); `failed` the relay could not take it in 24 hours
 * or refused it; `canceled` a scheduled message its sender took back.
 */
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

/** A recipient refused before or at submission, and why. */
export interface RejectedRecipient {
  email: string;
  reason: string;
}

const jsonOf = <T>(empty: T) => ({
  to: (value: T | undefined) => (value === undefined ? undefined : JSON.stringify(value)),
  from: (value: string | null): T => (value ? (JSON.parse(value) as T) : empty),
});

/** A message sent through /api/v1/emails (platform.md "Sending by HTTP"). */
@Entity('emails')
@Index('ix_emails_company_created', ['companyId', 'createdAt'])
@Index('ix_emails_message', ['messageId'])
@Index('ix_emails_waiting', ['nextAttemptAt', 'id'], { where: 'next_attempt_at IS NOT NULL' })
export class Email extends BaseEntity {
  @ManyToOne(() => Company, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'company_id' })
  company: Company;

  @Column({ type: 'integer' })
  companyId: number;

  /** The API key that sent it; null when a user did (or the key was deleted). */
  @Column({ type: 'integer', nullable: true })
  apiKeyId: number | null;

  /** `compose`: the service composes the MIME message; `raw`: the caller gave it whole. */
  @Column({ type: 'varchar', length: 8 })
  kind: 'compose' | 'raw';

  /** The Message-ID header, `<…>`: with the queue id it joins the message to its clean records. */
  @Column({ type: 'varchar', length: 500 })
  messageId: string;

  @Column({ type: 'varchar', length: 320 })
  envelopeFrom: string;

  /** The From header as given (`Name <addr>` or `addr`); the envelope sender for a raw message. */
  @Column({ type: 'varchar', length: 998, name: 'from_header' })
  from: string;

  @Column({ type: 'text', name: 'to_addresses', transformer: jsonOf<string[]>([]) })
  to: string[];

  @Column({ type: 'text', name: 'cc_addresses', transformer: jsonOf<string[]>([]) })
  cc: string[];

  @Column({ type: 'text', name: 'bcc_addresses', transformer: jsonOf<string[]>([]) })
  bcc: string[];

  @Column({ type: 'varchar', length: 998, nullable: true })
  replyTo: string | null;

  @Column({ type: 'varchar', length: 998, nullable: true })
  subject: string | null;

  @Column({ type: 'varchar', length: 16 })
  status: EmailStatus;

  /** The envelope recipients handed to the relay (or to be). */
  @Column({ type: 'text', transformer: jsonOf<string[]>([]) })
  accepted: string[];

  /**
   * Of a submitted message: the recipients the relay deferred (4xx at RCPT TO) while it took the
   * others, handed over again in a submission of their own at `nextAttemptAt`.
   */
  @Column({ type: 'text', name: 'pending_recipients', transformer: jsonOf<string[]>([]) })
  pending: string[];

  @Column({ type: 'text', transformer: jsonOf<RejectedRecipient[]>([]) })
  rejected: RejectedRecipient[];

  @Column({ type: 'text', transformer: jsonOf<Record<string, string>>({}) })
  tags: Record<string, string>;

  @Column({ type: 'text', transformer: jsonOf<Record<string, string>>({}) })
  metadata: Record<string, string>;

  /** What the relay is given (EmailContent as JSON), kept until the relay took it or it failed. */
  @Column({ type: 'text', nullable: true, select: false })
  content: string | null;

  @Column({ type: DATETIME, nullable: true })
  scheduledAt: Date | null;

  /**
   * When the worker takes it next (queued, scheduled, or submitted with recipients still to hand
   * over); while a submission runs, when its claim lapses; null once nothing is left to do.
   */
  @Column({ type: DATETIME, nullable: true })
  nextAttemptAt: Date | null;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  /** The claim of the submission in flight (a random id): only its claimer records its outcome. */
  @Column({ type: 'varchar', length: 36, nullable: true })
  claim: string | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  lastError: string | null;

  @Column({ type: DATETIME, nullable: true })
  submittedAt: Date | null;

  /** Postfix's queue id, from its `250 … queued as …` answer. */
  @Column({ type: 'varchar', length: 64, nullable: true })
  queueId: string | null;

  /** Every queue id the relay gave: the first, then one per later submission of deferred recipients. */
  @Column({ type: 'text', name: 'queue_ids', transformer: jsonOf<string[]>([]) })
  queueIds: string[];

  @Column({ type: 'varchar', length: 500, nullable: true })
  relayResponse: string | null;
}
