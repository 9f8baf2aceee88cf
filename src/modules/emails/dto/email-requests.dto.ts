import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBase64,
  IsIn,
  IsISO8601,
  IsString,
  Matches,
  MaxLength,
  MinLength,
  registerDecorator,
  ValidateNested,
  ValidationOptions,
} from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto';
import { IsDateFilter } from '../../../common/validation/date-filter';
import { Omittable } from '../../../common/validation/presence';
import { EMAIL_STATUSES, type EmailStatus } from '../entities/email.entity';

/** platform.md "Sending by HTTP": the bounds of a message. */
export const MAX_RECIPIENTS = 50;
export const MAX_BODY_CHARACTERS = 5 * 1024 * 1024;
export const MAX_ATTACHMENTS = 10;
export const MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024;
export const MAX_RAW_BYTES = 25 * 1024 * 1024;
export const MAX_TAGS = 10;
export const MAX_METADATA_JSON = 2048;
export const MAX_BATCH = 100;
export const MAX_SCHEDULE_AHEAD_MS = 7 * 86_400_000;
const TAG_PART = /^[A-Za-z0-9_-]{1,64}$/;
/** RFC 5322 field names: printable ASCII but the colon. */
const HEADER_NAME = /^[!-9;-~]{1,76}$/;
/** Headers the service writes itself or that would change what the relay checks. */
const REFUSED_HEADER =
  /^(from|to|cc|bcc|subject|date|message-id|sender|return-path|dkim-signature|mime-version|received|content-.*)$/i;

/** A single address or a list, as a list (`"a@x"` → `["a@x"]`). */
const AddressList = () =>
  Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? [value] : value));

/** An object of string values whose entries pass `check` (a message naming the first one that does not). */
function StringMap(check: (entries: Array<[string, unknown]>) => string | null, options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'stringMap',
      target: target.constructor,
      propertyName,
      options,
      validator: {
        validate: (value: unknown) =>
          typeof value === 'object' &&
          value !== null &&
          !Array.isArray(value) &&
          check(Object.entries(value)) === null,
        defaultMessage: (args) => {
          const value: unknown = args?.value;
          if (typeof value !== 'object' || value === null || Array.isArray(value))
            return `${propertyName} must be an object`;
          return `${propertyName}: ${check(Object.entries(value))}`;
        },
      },
    });
}

const checkHeaders = (entries: Array<[string, unknown]>): string | null => {
  for (const [name, value] of entries) {
    if (!HEADER_NAME.test(name)) return `"${name.slice(0, 80)}" is not a header name`;
    if (REFUSED_HEADER.test(name)) return `${name} is set by the service and cannot be given`;
    if (typeof value !== 'string') return `${name} must be a string`;
    if (/[\r\n]/.test(value)) return `${name} must not contain line breaks`;
    if (value.length > 998) return `${name} must be at most 998 characters`;
  }
  return entries.length > 50 ? 'at most 50 headers' : null;
};

const checkTags = (entries: Array<[string, unknown]>): string | null => {
  if (entries.length > MAX_TAGS) return `at most ${MAX_TAGS} tags`;
  for (const [name, value] of entries) {
    if (!TAG_PART.test(name)) return `tag name "${name.slice(0, 80)}" must be 1-64 of A-Z a-z 0-9 _ -`;
    if (typeof value !== 'string' || !TAG_PART.test(value))
      return `tag ${name} must be 1-64 of A-Z a-z 0-9 _ -`;
  }
  return null;
};

const checkMetadata = (entries: Array<[string, unknown]>): string | null => {
  for (const [name, value] of entries)
    if (typeof value !== 'string') return `${name.slice(0, 80)} must be a string`;
  // 2 KB: bytes of its UTF-8 JSON, not characters (one character may take up to 4).
  return Buffer.byteLength(JSON.stringify(Object.fromEntries(entries)), 'utf8') > MAX_METADATA_JSON
    ? `at most ${MAX_METADATA_JSON} bytes as JSON`
    : null;
};

/** An attachment (base64), inline when it has a `contentId` (`<img src="cid:…">`). */
export class EmailAttachmentDto {
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  @Matches(/^[^\r\n\0]*$/, { message: 'filename must not contain line breaks' })
  filename: string;

  /** The file, base64. */
  @ApiProperty({ format: 'byte' })
  @IsString()
  @IsBase64()
  content: string;

  @Omittable()
  @IsString()
  @Matches(/^[\w.+-]+\/[\w.+-]+$/, { message: 'contentType must be a media type such as image/png' })
  contentType?: string;

  /** Makes it inline: the HTML refers to it as `cid:<contentId>`. */
  @Omittable()
  @IsString()
  @Matches(/^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.@-]{1,200}$/, {
    message: 'contentId must be 1-200 characters of an addr-spec',
  })
  contentId?: string;
}

/** What every message may carry besides its content. */
class MessageExtrasDto {
  /** At most 10 `name` → `value` pairs, each `[A-Za-z0-9_-]{1,64}`; shown on its records, reports and events. */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { campaign: 'nov' },
  })
  @Omittable()
  @StringMap(checkTags)
  tags?: Record<string, string>;

  /** A flat object of strings, at most 2 KB as JSON; given back in its events. */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { orderId: '42' },
  })
  @Omittable()
  @StringMap(checkMetadata)
  metadata?: Record<string, string>;
}

/** `POST /api/v1/emails`: one message for the service to compose. */
export class SendEmailDto extends MessageExtrasDto {
  /** `"Name <addr>"` or `addr`, of a verified domain of the company. */
  @ApiProperty({ example: 'Shop <orders@example.com>' })
  @IsString()
  @MaxLength(998)
  from: string;

  /** An address or a list; with `cc` and `bcc` at most 50 recipients. */
  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    example: ['ana@example.net'],
  })
  @AddressList()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_RECIPIENTS)
  @IsString({ each: true })
  @MaxLength(998, { each: true })
  to: string[];

  @ApiPropertyOptional({ oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] })
  @Omittable()
  @AddressList()
  @IsArray()
  @ArrayMaxSize(MAX_RECIPIENTS)
  @IsString({ each: true })
  @MaxLength(998, { each: true })
  cc?: string[];

  @ApiPropertyOptional({ oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] })
  @Omittable()
  @AddressList()
  @IsArray()
  @ArrayMaxSize(MAX_RECIPIENTS)
  @IsString({ each: true })
  @MaxLength(998, { each: true })
  bcc?: string[];

  @Omittable()
  @IsString()
  @MaxLength(998)
  replyTo?: string;

  @ApiProperty({ example: 'Your order #42' })
  @IsString()
  @MinLength(1)
  @MaxLength(998)
  @Matches(/^[^\r\n]*$/, { message: 'subject must not contain line breaks' })
  subject: string;

  /** The plain-text body (`text` and/or `html`), at most 5 MB. */
  @ApiPropertyOptional({ example: 'Thank you for your order.' })
  @Omittable()
  @IsString()
  @MaxLength(MAX_BODY_CHARACTERS)
  text?: string;

  /** The HTML body, at most 5 MB. */
  @ApiPropertyOptional({ example: '<p>Thank you for your order.</p>' })
  @Omittable()
  @IsString()
  @MaxLength(MAX_BODY_CHARACTERS)
  html?: string;

  /** Extra headers; these are the service's: From, To, Cc, Bcc, Subject, Date, Message-ID, Sender, Return-Path, DKIM-Signature, Content-*, MIME-Version, Received. */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { 'X-Entity-Ref-ID': '42' },
  })
  @Omittable()
  @StringMap(checkHeaders)
  headers?: Record<string, string>;

  /** At most 10, at most 10 MB decoded in all. */
  @Omittable()
  @IsArray()
  @ArrayMaxSize(MAX_ATTACHMENTS)
  @ValidateNested({ each: true })
  @Type(() => EmailAttachmentDto)
  attachments?: EmailAttachmentDto[];

  /** When it leaves (ISO 8601), at most 7 days ahead; absent: now. */
  @Omittable()
  @IsISO8601({ strict: true })
  scheduledAt?: string;
}

/** `POST /api/v1/emails/batch`. */
export class SendEmailBatchDto {
  /** 1 to 100 messages, each judged on its own. */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_BATCH)
  @ValidateNested({ each: true })
  @Type(() => SendEmailDto)
  messages: SendEmailDto[];
}

/** `POST /api/v1/emails/raw`: a complete RFC 5322 message and its envelope. */
export class SendRawEmailDto extends MessageExtrasDto {
  /** The envelope sender (MAIL FROM), of a verified domain of the company. */
  @ApiProperty({ example: 'bounces@example.com' })
  @IsString()
  @MaxLength(320)
  from: string;

  /** 1 to 50 envelope recipients. */
  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    example: ['ana@example.net'],
  })
  @AddressList()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_RECIPIENTS)
  @IsString({ each: true })
  @MaxLength(320, { each: true })
  to: string[];

  /** The message, base64, at most 25 MB decoded. */
  @ApiProperty({ format: 'byte' })
  @IsString()
  @MinLength(1)
  @IsBase64()
  raw: string;
}

/** `GET /api/v1/emails`. */
export class ListEmailsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: EMAIL_STATUSES })
  @Omittable()
  @IsIn(EMAIL_STATUSES)
  status?: EmailStatus;

  /** Sent on or after this day (`YYYY-MM-DD`) or moment (ISO 8601). */
  @Omittable()
  @IsDateFilter()
  from?: string;

  /** Sent on or before this day or moment. */
  @Omittable()
  @IsDateFilter()
  to?: string;

  /** `name:value`. */
  @ApiPropertyOptional({ example: 'campaign:nov' })
  @Omittable()
  @IsString()
  @Matches(/^[A-Za-z0-9_-]{1,64}:[A-Za-z0-9_-]{1,64}$/, { message: 'tag must be name:value' })
  tag?: string;
}
