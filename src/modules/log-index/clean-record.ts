import type { BounceCategory, BounceType } from '../deliverability/bounce-classifier';
import type { MailboxProvider } from '../deliverability/mailbox-providers';

/**
 * The clean log (resources.md "Clean log"): one record per message and recipient, built from
 * Postfix lines and enriched by mail-provider events. Shared by the LogIndex implementations,
 * the ingest that writes records and the reports that read them.
 */
export const CLEAN_STATUSES = [
  'queued',
  'sent',
  'deferred',
  'bounced',
  'expired',
  'rejected',
  'delivered',
  'complained',
] as const;
export type CleanStatus = (typeof CLEAN_STATUSES)[number];

/** One raw outcome in a record's history. */
export interface CleanEvent {
  at: string;
  status: string;
  dsn: string | null;
  response: string | null;
}

export interface CleanRecord {
  /** SHA-256 (hex, 64) of host + queue id + recipient; of host + time + from + to for a NOQUEUE reject. */
  id: string;
  companyId: number | null;
  companyUuid: string | null;
  host: string;
  queueId: string | null;
  messageId: string | null;
  from: string;
  /** Lower-case domain of `from`; null for the null sender. */
  senderDomain: string | null;
  to: string;
  origTo: string | null;
  status: CleanStatus;
  dsn: string | null;
  response: string | null;
  relay: string | null;
  delay: number | null;
  size: number | null;
  clientIp: string | null;
  saslUsername: string | null;
  remoteQueueId: string | null;
  attempts: number;
  opened: boolean;
  clicked: boolean;
  firstSeenAt: Date;
  lastEventAt: Date;
  events: CleanEvent[];
  /** The message of /api/v1/emails it belongs to (its uuid); null for SMTP mail. */
  emailId: string | null;
  /**
   * The mailbox provider (deliverability.md): by the recipient's domain or the next hop. Null
   * only for a record built before providers were decided, until the backfill reaches it.
   */
  provider: MailboxProvider | null;
  /** The bounce class of a failure (deliverability.md "Bounce classes"); null for any other outcome. */
  bounceType: BounceType | null;
  bounceCategory: BounceCategory | null;
  /** The rule that decided the class, e.g. `gmail-unsolicited`. */
  bounceRule: string | null;
}

/** Which records a report or a search covers: always a window on `lastEventAt`. */
export interface LogFilter {
  /** One company's records, or every company's (admins): said, never implied by a missing id. */
  companyId: number | 'all';
  from: Date;
  toExclusive: Date;
  status?: CleanStatus;
  recipient?: string;
  sender?: string;
  senderDomain?: string;
  messageId?: string;
  queueId?: string;
  /** A substring of the recipient, the sender, the message id or the queue id. */
  search?: string;
  provider?: MailboxProvider;
  bounceCategory?: BounceCategory;
}

export type StatusCounts = Record<CleanStatus, number>;

/** Records in a window: `processed` = all of them; one count per current status; the opened and clicked flags. */
export interface LogCounts extends Omit<StatusCounts, 'queued'> {
  processed: number;
  queued: number;
  opened: number;
  clicked: number;
}

export const emptyCounts = (): LogCounts => ({
  processed: 0,
  queued: 0,
  sent: 0,
  delivered: 0,
  deferred: 0,
  bounced: 0,
  rejected: 0,
  expired: 0,
  complained: 0,
  opened: 0,
  clicked: 0,
});

/** The position after the last record of a page (newest first: lastEventAt desc, id desc). */
export interface LogPosition {
  at: Date;
  id: string;
}
