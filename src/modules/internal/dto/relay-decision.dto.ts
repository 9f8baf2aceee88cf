import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, IsInt, IsIP, isIP, IsString, Matches, MaxLength, Min } from 'class-validator';
import { FastBodyPath, isPlainString } from '../../../common/validation/fast-path';
import { Omittable } from '../../../common/validation/presence';
import { RELAY_STATUSES, type RelayStatus } from '../../companies/relay-status';
import {
  SUPPRESSION_REASONS,
  type SuppressionReason,
} from '../../suppression/entities/suppression-entry.entity';
import type { RelayDecision, RelayQuery } from '../relay-decision';

/** An address as SMTP carries it: something@domain, no spaces or angle brackets. */
const MAILBOX = /^[^\s<>@]+@[^\s<>@]+$/;

const QUERY_FIELDS = new Set(['relayUsername', 'clientAddress', 'sender', 'recipients', 'size']);

/** The ordinary relay query, checked by hand: every message the relay accepts asks (see FastBodyPath). */
export function isPlainRelayQuery(body: Record<string, unknown>): boolean {
  for (const key in body) if (!QUERY_FIELDS.has(key)) return false;
  const { relayUsername, clientAddress, sender, recipients, size } = body;
  if (relayUsername !== undefined && !isPlainString(relayUsername, 64)) return false;
  if (clientAddress !== undefined && !(isPlainString(clientAddress, 64) && isIP(clientAddress))) return false;
  if (sender !== undefined && !isPlainString(sender, 320)) return false;
  if (recipients !== undefined) {
    if (!Array.isArray(recipients) || recipients.length > 1000) return false;
    for (const r of recipients) if (!(isPlainString(r, 320) && MAILBOX.test(r))) return false;
  }
  return size === undefined || (typeof size === 'number' && Number.isInteger(size) && size >= 0);
}

/** What the relay knows of a message; at least one of `relayUsername`, `clientAddress`, `sender`. */
@FastBodyPath(isPlainRelayQuery)
export class RelayDecisionQueryDto implements RelayQuery {
  /** The SASL username the client authenticated with. */
  @Omittable()
  @IsString()
  @MaxLength(64)
  relayUsername?: string;

  /** The connecting client's IP address. */
  @Omittable()
  @IsIP()
  clientAddress?: string;

  /**
   * The envelope sender (MAIL FROM) as the client gave it; an empty string is the null sender of
   * bounces. Any text: the decision judges it (a sender without a verified domain is refused).
   */
  @Omittable()
  @IsString()
  @MaxLength(320)
  sender?: string;

  /** The envelope recipients (RCPT TO), at most 1000. */
  @Omittable()
  @IsString({ each: true })
  @MaxLength(320, { each: true })
  @Matches(MAILBOX, { each: true, message: 'each value in recipients must be an e-mail address' })
  @ArrayMaxSize(1000)
  recipients?: string[];

  /** The message size in bytes, when known. */
  @Omittable()
  @IsInt()
  @Min(0)
  size?: number;
}

export class QuotaDto {
  limit: number;
  used: number;
  remaining: number;
}

export class RejectedRecipientDto {
  email: string;
  @ApiProperty({ enum: SUPPRESSION_REASONS }) reason: SuppressionReason;
}

export class RelayDecisionDto implements RelayDecision {
  /** Whether the relay may accept the message (`action` is `OK`). */
  allowed: boolean;
  /** The Postfix policy word and text: `OK`, `REJECT <text>` or `DEFER_IF_PERMIT <text>`. */
  @ApiProperty({ example: 'OK' }) action: string;
  /** The company's relay status; null when the client was not identified (no SMTP AUTH, no allowed network) or no company was found. */
  @ApiProperty({ enum: RELAY_STATUSES, nullable: true, type: String }) status: RelayStatus | null;
  /**
   * The company the message is attributed to. For a client that was not identified it is the
   * owner of the sender's verified domain, for information only (`allowed` is false).
   */
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) companyUuid: string | null;
  /**
   * Why it is refused or deferred: the text of `action`, or `not_authenticated` for a client with
   * neither SMTP AUTH nor an address in a company's allowed networks; null when allowed.
   */
  reason: string | null;
  /** Null when the client was not identified or no company was found. */
  @ApiProperty({ type: QuotaDto, nullable: true }) quota: QuotaDto | null;
  /** Whether the sender's domain is a verified domain of the company; null without a sender or an identified client. */
  @ApiProperty({ type: Boolean, nullable: true }) senderDomainVerified: boolean | null;
  /** Recipients on the company's or the global suppression list: listed, not a reason to refuse the message. */
  @ApiProperty({ type: [RejectedRecipientDto] }) rejectedRecipients: RejectedRecipientDto[];
}
