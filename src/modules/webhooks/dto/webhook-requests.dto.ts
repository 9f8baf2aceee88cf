import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsBoolean, IsIn, IsString, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto';
import { IsDateFilter } from '../../../common/validation/date-filter';
import { Nullable, Omittable } from '../../../common/validation/presence';
import { MAX_WEBHOOK_URL_LENGTH } from '../delivery/webhook-target';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../entities/webhook-delivery.entity';
import { ALL_EVENTS, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../webhook-event-types';

const EVENT_CHOICES = [ALL_EVENTS, ...WEBHOOK_EVENT_TYPES];
/** At most this many domains in an endpoint's `domains`. */
export const MAX_WEBHOOK_DOMAINS = 100;

/** `POST /api/v1/webhooks`. */
export class CreateWebhookDto {
  /** `https://…` (`http://` only where WEBHOOK_ALLOW_HTTP allows), at most 2,048 characters, no credentials; its host must resolve to public addresses only. */
  @IsString()
  @MaxLength(MAX_WEBHOOK_URL_LENGTH)
  url: string;

  /** Event types, or `["*"]` for every type. */
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(EVENT_CHOICES.length)
  @IsIn(EVENT_CHOICES, { each: true })
  events: string[];

  /** Sender domains (the company's) whose mail events it receives; empty or absent: all. */
  @Omittable()
  @IsArray()
  @ArrayMaxSize(MAX_WEBHOOK_DOMAINS)
  @IsString({ each: true })
  @MaxLength(253, { each: true })
  domains?: string[];

  @Omittable()
  @IsString()
  @MaxLength(500)
  description?: string;
}

/** `PATCH /api/v1/webhooks/:uuid`: a list given replaces the old one. */
export class UpdateWebhookDto {
  @Omittable()
  @IsString()
  @MaxLength(MAX_WEBHOOK_URL_LENGTH)
  url?: string;

  @Omittable()
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(EVENT_CHOICES.length)
  @IsIn(EVENT_CHOICES, { each: true })
  events?: string[];

  @Omittable()
  @IsArray()
  @ArrayMaxSize(MAX_WEBHOOK_DOMAINS)
  @IsString({ each: true })
  @MaxLength(253, { each: true })
  domains?: string[];

  /** `null` or `""` clears it. */
  @Nullable()
  @IsString()
  @MaxLength(500)
  description?: string | null;

  /** `false` disables it (`manual`); `true` enables it again and clears `failingSince`. */
  @Omittable()
  @IsBoolean()
  enabled?: boolean;
}

/** `POST /api/v1/webhooks/:uuid/test`. */
export class TestWebhookDto {
  /** The type of the sample event (default `webhook.test`). */
  @Omittable()
  @IsIn(WEBHOOK_EVENT_TYPES)
  type?: WebhookEventType;
}

/** The endpoint's deliveries, newest first. */
export class ListDeliveriesQueryDto extends PageQueryDto {
  @Omittable()
  @IsIn(DELIVERY_STATUSES)
  status?: DeliveryStatus;

  @Omittable()
  @IsIn(WEBHOOK_EVENT_TYPES)
  type?: WebhookEventType;

  /** Made at or after (`YYYY-MM-DD` or a timestamp; UTC). */
  @Omittable()
  @IsDateFilter()
  from?: string;

  /** Made at or before (a date: that whole day). */
  @Omittable()
  @IsDateFilter()
  to?: string;
}

/** `POST /api/v1/webhooks/:uuid/replay`: the deliveries made in the window, sent again. */
export class ReplayDeliveriesDto {
  /** Start of the window (`YYYY-MM-DD` or a timestamp). The window is at most 7 days. */
  @IsDateFilter()
  from: string;

  /** End of the window (default: now). */
  @Omittable()
  @IsDateFilter()
  to?: string;

  /** Which deliveries (default `failed`). */
  @Omittable()
  @IsIn(DELIVERY_STATUSES)
  status?: DeliveryStatus;
}
