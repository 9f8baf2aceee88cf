import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PageResponseDto } from '../../../common/pagination/page';
import { DELIVERY_STATUSES, type DeliveryStatus, WebhookDelivery } from '../entities/webhook-delivery.entity';
import type { WebhookAttempt } from '../entities/webhook-attempt.entity';
import { WEBHOOK_DISABLED_REASONS, type WebhookDisabledReason, Webhook } from '../entities/webhook.entity';

export class WebhookDto {
  uuid: string;
  companyUuid: string;
  @ApiProperty({ example: 'https://hooks.example.com/relay' }) url: string;
  description: string | null;
  /** Event types, or `["*"]`. */
  @ApiProperty({ example: ['email.bounced', 'email.complained'] }) events: string[];
  /** Sender domains whose mail events it receives; empty: all. */
  domains: string[];
  enabled: boolean;
  @ApiProperty({ enum: WEBHOOK_DISABLED_REASONS, nullable: true })
  disabledReason: WebhookDisabledReason | null;
  createdAt: Date;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  /** The first failure since the last success. */
  failingSince: Date | null;

  static from(webhook: Webhook, companyUuid: string): WebhookDto {
    return {
      uuid: webhook.uuid,
      companyUuid,
      url: webhook.url,
      description: webhook.description,
      events: webhook.events,
      domains: webhook.domains,
      enabled: webhook.enabled,
      disabledReason: webhook.disabledReason,
      createdAt: webhook.createdAt,
      lastSuccessAt: webhook.lastSuccessAt,
      lastFailureAt: webhook.lastFailureAt,
      failingSince: webhook.failingSince,
    };
  }
}

export class WebhookPageDto extends PageResponseDto {
  @ApiProperty({ type: [WebhookDto] }) items: WebhookDto[];
}

/** Deliveries made in the last 24 hours, by status. */
export class DeliveryCountsDto {
  delivered: number;
  failed: number;
  pending: number;
}

export class WebhookDetailDto extends WebhookDto {
  @ApiProperty({ type: DeliveryCountsDto }) last24h: DeliveryCountsDto;
}

export class WebhookSecretDto {
  /** `whsec_` and the base64 of 32 bytes: verify signatures with it (Standard Webhooks). */
  @ApiProperty({ example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }) secret: string;
}

export class CreatedWebhookDto {
  @ApiProperty({ type: WebhookDto }) webhook: WebhookDto;
  @ApiProperty({ example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }) secret: string;
}

export class DeliveryQueuedDto {
  deliveryUuid: string;
}

export class ReplayQueuedDto {
  /** Deliveries sent again. */
  queued: number;
}

export class AttemptDto {
  at: Date;
  /** The HTTP status; absent when no answer came. */
  @ApiPropertyOptional() status?: number;
  /** Why no answer came (network error, timeout, refused address). */
  @ApiPropertyOptional() error?: string;
  ms: number;
  /** The first 1 KB of the answer body. */
  body: string;

  static from(a: Pick<WebhookAttempt, 'at' | 'status' | 'error' | 'ms' | 'body'>): AttemptDto {
    return {
      at: a.at,
      ...(a.status !== null && { status: a.status }),
      ...(a.error !== null && { error: a.error }),
      ms: a.ms,
      body: a.body,
    };
  }
}

export class DeliveryDto {
  uuid: string;
  /** The `webhook-id` header of its attempts. */
  eventId: string;
  type: string;
  @ApiProperty({ enum: DELIVERY_STATUSES }) status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: Date | null;
  @ApiProperty({ type: AttemptDto, nullable: true }) lastAttempt: AttemptDto | null;
  createdAt: Date;

  static from(d: WebhookDelivery, eventId: string): DeliveryDto {
    return {
      uuid: d.uuid,
      eventId,
      type: d.type,
      status: d.status,
      attempts: d.attempts,
      nextAttemptAt: d.status === 'pending' ? d.nextAttemptAt : null,
      lastAttempt:
        d.lastAttemptAt === null
          ? null
          : AttemptDto.from({
              at: d.lastAttemptAt,
              status: d.lastStatus,
              error: d.lastError,
              ms: d.lastMs ?? 0,
              body: d.lastBody ?? '',
            }),
      createdAt: d.createdAt,
    };
  }
}

export class DeliveryPageDto extends PageResponseDto {
  @ApiProperty({ type: [DeliveryDto] }) items: DeliveryDto[];
}

export class DeliveryDetailDto extends DeliveryDto {
  @ApiProperty({ type: [AttemptDto] }) attemptHistory: AttemptDto[];
  /** The body sent: `{ type, timestamp, data }`. */
  @ApiProperty({ type: 'object', additionalProperties: true }) payload: Record<string, unknown>;
}
