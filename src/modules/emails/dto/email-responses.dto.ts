import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PageResponseDto } from '../../../common/pagination/page';
import { EMAIL_STATUSES, type EmailStatus, Email } from '../entities/email.entity';

export class RejectedRecipientDto {
  @ApiProperty({ example: 'gone@example.net' }) email: string;
  /** Why it was not sent to: `suppressed (hard_bounce)`, or the relay's answer. */
  @ApiProperty({ example: 'suppressed (hard_bounce)' }) reason: string;
}

/** The answer of a message stored (202): its id, and who it goes to. */
export class SentEmailDto {
  /** The message's id (`GET /api/v1/emails/:id`); its records' and events' `emailId`. */
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: '<0b6f1c5e-4a7d-4c1e-9a3b-2f7d0c9e8a11@example.com>' }) messageId: string;
  @ApiProperty({ enum: ['queued', 'scheduled'] }) status: EmailStatus;
  @ApiProperty({ example: ['ana@example.net'] }) accepted: string[];
  @ApiProperty({ type: [RejectedRecipientDto] }) rejected: RejectedRecipientDto[];
}

/** One message's outcome in a batch: its answer, or its refusal. */
export class BatchItemDto {
  /** Its place in `messages`, from 0. */
  index: number;
  @ApiPropertyOptional({ format: 'uuid' }) id?: string;
  @ApiPropertyOptional() messageId?: string;
  @ApiPropertyOptional({ enum: ['queued', 'scheduled'] }) status?: EmailStatus;
  @ApiPropertyOptional() accepted?: string[];
  @ApiPropertyOptional({ type: [RejectedRecipientDto] }) rejected?: RejectedRecipientDto[];
  /** The refusal of this message, as the single route would answer it. */
  @ApiPropertyOptional({ example: { code: 422, msg: 'Sender domain not verified' } })
  error?: { code: number; msg: string };
}

export class SentBatchDto {
  @ApiProperty({ type: [BatchItemDto] }) items: BatchItemDto[];
}

/** A message sent by HTTP. */
export class EmailDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  messageId: string;
  /** The From header as given (the envelope sender for a raw message without one). */
  @ApiProperty({ example: 'Shop <orders@example.com>' }) from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  subject: string | null;
  /** `scheduled` → `queued` → `submitted` (the relay took it), or `failed`, or `canceled`. */
  @ApiProperty({ enum: EMAIL_STATUSES }) status: EmailStatus;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: { campaign: 'nov' } })
  tags: Record<string, string>;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: { orderId: '42' } })
  metadata: Record<string, string>;
  scheduledAt: Date | null;
  createdAt: Date;
  /** When the relay took it. */
  submittedAt: Date | null;
  /** Postfix's queue id, from its answer. */
  @ApiProperty({ type: String, nullable: true, example: '4XkW2T1zq9z6' }) queueId: string | null;
  /** Why the last hand-over to the relay failed, while it is retried or once it failed. */
  lastError: string | null;

  static from(email: Email): EmailDto {
    return {
      id: email.uuid,
      messageId: email.messageId,
      from: email.from,
      to: email.to,
      cc: email.cc,
      bcc: email.bcc,
      subject: email.subject,
      status: email.status,
      tags: email.tags,
      metadata: email.metadata,
      scheduledAt: email.scheduledAt,
      createdAt: email.createdAt,
      submittedAt: email.submittedAt,
      queueId: email.queueId,
      lastError: email.lastError,
    };
  }
}

export class EmailPageDto extends PageResponseDto {
  @ApiProperty({ type: [EmailDto] }) items: EmailDto[];
}

/** A recipient's state: from its clean record once the relay took the message. */
export class EmailRecipientDto {
  email: string;
  /** A clean-record status (`sent`, `bounced`, …), or `queued`, `rejected`, `failed`, `canceled` before one exists. */
  @ApiProperty({ example: 'sent' }) status: string;
  dsn: string | null;
  response: string | null;
  lastEventAt: Date;
}

export class EmailDetailDto extends EmailDto {
  @ApiProperty({ type: [EmailRecipientDto] }) recipients: EmailRecipientDto[];
}
