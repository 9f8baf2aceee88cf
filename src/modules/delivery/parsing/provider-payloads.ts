import { createHash } from 'node:crypto';

/**
 * Mail-provider delivery events (integrations.md "Mail provider delivery events") as pure
 * functions: which provider sent the body, and each event normalised. One bad event is reported
 * in `bad` with its index; it never fails the batch.
 */
export type Provider = 'postmark' | 'sendgrid' | 'sparkpost';
export type ProviderEventType =
  'delivered' | 'deferred' | 'bounced' | 'dropped' | 'complained' | 'opened' | 'clicked' | 'unsubscribed';
export type BounceKind = 'hard' | 'soft' | 'block';

export interface NormalisedEvent {
  provider: Provider;
  /** The provider's own id, else `<provider>:sha256:<hash of the raw event>`. */
  providerEventId: string;
  type: ProviderEventType;
  /** Trimmed, lower-case. */
  recipient: string;
  /** The Message-ID header, without angle brackets (SendGrid `smtp-id`). */
  messageId?: string;
  /** The provider's message id, matched against the clean record's `remoteQueueId`. */
  providerMessageId?: string;
  at: Date;
  bounceKind?: BounceKind;
  dsn?: string;
  reason?: string;
  raw: unknown;
}

export interface NormalisedBatch {
  events: NormalisedEvent[];
  bad: Array<{ index: number; reason: string }>;
}

type Raw = Record<string, unknown>;

/** Postmark posts one object with `RecordType`; SendGrid an array of items with `event`; SparkPost items with `msys`. */
export function detectProvider(body: unknown): Provider | null {
  if (isObject(body) && typeof body.RecordType === 'string') return 'postmark';
  if (!Array.isArray(body) || body.length === 0) return null;
  if (body.every((item) => isObject(item) && 'msys' in item)) return 'sparkpost';
  if (body.every((item) => isObject(item) && 'event' in item)) return 'sendgrid';
  return null;
}

export function normaliseEvents(body: unknown): NormalisedBatch {
  const provider = detectProvider(body);
  const batch: NormalisedBatch = { events: [], bad: [] };
  if (!provider) return batch;
  const items: unknown[] = provider === 'postmark' ? [body] : (body as unknown[]);
  items.forEach((item, index) => {
    try {
      const event =
        provider === 'postmark'
          ? postmark(item as Raw)
          : provider === 'sendgrid'
            ? sendgrid(item as Raw)
            : sparkpost(item as Raw);
      if (event) batch.events.push(event);
    } catch (e: unknown) {
      batch.bad.push({ index, reason: e instanceof BadEvent ? e.message : 'unreadable event' });
    }
  });
  return batch;
}

class BadEvent extends Error {}

const POSTMARK_BOUNCES: Record<string, BounceKind | 'complaint'> = {
  HardBounce: 'hard',
  SoftBounce: 'soft',
  Transient: 'soft',
  DnsError: 'soft',
  SpamNotification: 'complaint',
};

function postmark(raw: Raw): NormalisedEvent {
  const record = String(raw.RecordType);
  const common = (type: ProviderEventType, recipientField: string, timeField: string) => ({
    provider: 'postmark' as const,
    type,
    recipient: recipientOf(raw[recipientField]),
    at: timeOf(raw[timeField]),
    ...(typeof raw.MessageID === 'string' && raw.MessageID && { providerMessageId: raw.MessageID }),
    raw,
  });
  switch (record) {
    case 'Delivery':
      return { ...common('delivered', 'Recipient', 'DeliveredAt'), providerEventId: hashId('postmark', raw) };
    case 'Bounce': {
      const kind = POSTMARK_BOUNCES[String(raw.Type)];
      if (!kind) throw new BadEvent(`Postmark bounce type ${String(raw.Type)} is not one we map`);
      return {
        ...common(kind === 'complaint' ? 'complained' : 'bounced', 'Email', 'BouncedAt'),
        providerEventId: postmarkId('bounce', raw),
        ...(kind !== 'complaint' && { bounceKind: kind }),
        ...(typeof raw.Description === 'string' && { reason: raw.Description }),
      };
    }
    case 'SpamComplaint':
      return {
        ...common('complained', 'Email', 'BouncedAt'),
        providerEventId: postmarkId('complaint', raw),
      };
    case 'Open':
      return { ...common('opened', 'Recipient', 'ReceivedAt'), providerEventId: hashId('postmark', raw) };
    case 'Click':
      return { ...common('clicked', 'Recipient', 'ReceivedAt'), providerEventId: hashId('postmark', raw) };
    case 'SubscriptionChange':
      if (raw.SuppressSending !== true)
        throw new BadEvent('Postmark subscription change that does not suppress');
      return {
        ...common('unsubscribed', 'Recipient', 'ChangedAt'),
        providerEventId: hashId('postmark', raw),
      };
    default:
      throw new BadEvent(`Postmark record type ${record} is not one we map`);
  }
}

/** Postmark numbers its bounces and complaints (`ID`); other records have no id of their own. */
function postmarkId(kind: string, raw: Raw): string {
  return typeof raw.ID === 'number' || typeof raw.ID === 'string'
    ? `postmark:${kind}:${raw.ID}`
    : hashId('postmark', raw);
}

const SENDGRID_TYPES: Record<string, ProviderEventType> = {
  delivered: 'delivered',
  deferred: 'deferred',
  bounce: 'bounced',
  dropped: 'dropped',
  spamreport: 'complained',
  open: 'opened',
  click: 'clicked',
  unsubscribe: 'unsubscribed',
  group_unsubscribe: 'unsubscribed',
};

function sendgrid(raw: Raw): NormalisedEvent {
  const type = SENDGRID_TYPES[String(raw.event)];
  if (!type) throw new BadEvent(`SendGrid event ${String(raw.event)} is not one we map`);
  const sgMessageId = typeof raw.sg_message_id === 'string' ? raw.sg_message_id.split('.')[0] : undefined;
  const smtpId = typeof raw['smtp-id'] === 'string' ? stripAngles(raw['smtp-id']) : undefined;
  return {
    provider: 'sendgrid',
    providerEventId:
      typeof raw.sg_event_id === 'string' && raw.sg_event_id
        ? `sendgrid:${raw.sg_event_id}`
        : hashId('sendgrid', raw),
    type,
    recipient: recipientOf(raw.email),
    at: timeOf(raw.timestamp),
    ...(smtpId && { messageId: smtpId }),
    ...(sgMessageId && { providerMessageId: sgMessageId }),
    ...(type === 'bounced' && { bounceKind: raw.type === 'blocked' ? 'soft' : 'hard' }),
    ...(typeof raw.status === 'string' && /^\d\.\d{1,3}\.\d{1,3}$/.test(raw.status) && { dsn: raw.status }),
    ...(typeof raw.reason === 'string' && { reason: raw.reason }),
    raw,
  };
}

const SPARKPOST_TYPES: Record<string, ProviderEventType> = {
  delivery: 'delivered',
  bounce: 'bounced',
  out_of_band: 'bounced',
  delay: 'deferred',
  spam_complaint: 'complained',
  open: 'opened',
  initial_open: 'opened',
  click: 'clicked',
  list_unsubscribe: 'unsubscribed',
  link_unsubscribe: 'unsubscribed',
};

/** SparkPost bounce classes (integrations.md): hard, soft, and the blocks that read like complaints. */
function sparkpostBounceKind(bounceClass: number): BounceKind | undefined {
  if ([10, 25, 30, 90].includes(bounceClass)) return 'hard';
  if ((bounceClass >= 20 && bounceClass <= 24) || [40, 60, 70].includes(bounceClass)) return 'soft';
  if (bounceClass >= 50 && bounceClass <= 54) return 'block';
  return undefined;
}

function sparkpost(raw: Raw): NormalisedEvent | null {
  const msys = raw.msys;
  if (!isObject(msys)) throw new BadEvent('SparkPost item without msys');
  const inner = Object.values(msys).find(isObject);
  // `{"msys":{}}` is SparkPost's ping when a webhook is created: no event, not an error.
  if (!inner) return null;
  const type = SPARKPOST_TYPES[String(inner.type)];
  if (!type) throw new BadEvent(`SparkPost event ${String(inner.type)} is not one we map`);
  const bounceClass = Number(inner.bounce_class);
  const bounceKind =
    type === 'bounced' && Number.isFinite(bounceClass) ? sparkpostBounceKind(bounceClass) : undefined;
  return {
    provider: 'sparkpost',
    providerEventId:
      typeof inner.event_id === 'string' && inner.event_id
        ? `sparkpost:${inner.event_id}`
        : hashId('sparkpost', raw),
    type,
    recipient: recipientOf(inner.rcpt_to),
    at: timeOf(inner.timestamp),
    ...(typeof inner.message_id === 'string' && inner.message_id && { providerMessageId: inner.message_id }),
    ...(bounceKind && { bounceKind }),
    ...(typeof inner.raw_reason === 'string' && { reason: inner.raw_reason }),
    raw,
  };
}

function recipientOf(value: unknown): string {
  if (typeof value !== 'string' || !/^[^\s@]+@[^\s@]+$/.test(value.trim()))
    throw new BadEvent('No recipient address');
  return value.trim().toLowerCase();
}

/** ISO 8601 text, or epoch seconds (number or numeric text). */
function timeOf(value: unknown): Date {
  let at: Date | undefined;
  if (typeof value === 'number') at = new Date(value * 1000);
  else if (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value)) at = new Date(Number(value) * 1000);
  else if (typeof value === 'string') at = new Date(value);
  if (!at || Number.isNaN(at.getTime())) throw new BadEvent('No readable event time');
  return at;
}

/** A stable id for an event its provider gives none: the hash of its canonical JSON (keys sorted). */
function hashId(provider: Provider, raw: unknown): string {
  return `${provider}:sha256:${createHash('sha256').update(canonicalJson(raw)).digest('hex')}`;
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const stripAngles = (value: string): string => value.trim().replace(/^<(.*)>$/s, '$1');
const isObject = (value: unknown): value is Raw =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
