import type { RelayStatus } from '../companies/relay-status';
import type { SuppressionReason } from '../suppression/entities/suppression-entry.entity';

/** What the relay knows when it asks (at least one of the first three). */
export interface RelayQuery {
  relayUsername?: string;
  clientAddress?: string;
  sender?: string;
  recipients?: string[];
  size?: number;
}

export interface RejectedRecipient {
  email: string;
  /** The reason of the company's own entry, else of the global one. */
  reason: SuppressionReason;
}

/** The answer of `POST /api/internal/relay-status` (integrations.md "Relay decision"). */
export interface RelayDecision {
  allowed: boolean;
  /** Postfix's policy word: `OK`, `REJECT <text>` or `DEFER_IF_PERMIT <text>`. */
  action: string;
  /** The company's relay status; null when no company was found. */
  status: RelayStatus | null;
  companyUuid: string | null;
  /** Why it is not allowed; null when allowed. */
  reason: string | null;
  quota: { limit: number; used: number; remaining: number } | null;
  /** Whether the sender's domain is a verified domain of the company; null without a sender. */
  senderDomainVerified: boolean | null;
  rejectedRecipients: RejectedRecipient[];
}
