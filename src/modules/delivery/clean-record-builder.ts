import { isoString } from '../../common/iso-string';
import { sha256Hex } from '../../common/secrets';
import { senderDomainName } from '../attribution/sender-identity';
import { deliverabilityOf } from '../deliverability/record-deliverability';
import type { CleanEvent, CleanRecord, CleanStatus } from '../log-index/clean-record';

/**
 * A clean record as a pure function of what is stored about it (resources.md "Clean log"):
 * the queue's facts, the recipient's delivery lines and the provider events matched to it. The
 * same facts in any order give the same record, so batches may arrive in any order and a
 * rebuild is always safe.
 */

export interface QueueFacts {
  host: string;
  queueId: string;
  clientIp: string | null;
  saslUsername: string | null;
  messageId: string | null;
  sender: string | null;
  size: number | null;
  expiredAt: Date | null;
  firstSeenAt: Date;
}

export interface DeliveryFact {
  recipient: string;
  origTo: string | null;
  at: Date;
  status: string;
  dsn: string | null;
  relay: string | null;
  delay: number | null;
  response: string | null;
  remoteQueueId: string | null;
}

export interface ProviderFact {
  id: number;
  type: string;
  at: Date;
  bounceKind: string | null;
  dsn: string | null;
  reason: string | null;
}

export interface RecordCompany {
  id: number;
  uuid: string;
}

/** The statuses after which a message counts against the quota (the relay accepted it and tried). */
export const COUNTED_STATUSES: ReadonlySet<CleanStatus> = new Set([
  'sent',
  'bounced',
  'expired',
  'deferred',
  'delivered',
  'complained',
]);

/** A recipient refused while the client was still sending (`QID: reject: RCPT`) is final too. */
const FINAL = new Set(['sent', 'bounced', 'expired', 'rejected']);
/** Provider outcomes replace a Postfix status only once Postfix handed the message over. */
const HANDED_OVER = new Set<CleanStatus>(['sent', 'delivered', 'bounced', 'complained']);

export const sha256 = (...parts: string[]): string => sha256Hex(parts.join('\n'));

export const recordIdOf = (host: string, queueId: string, recipient: string): string =>
  sha256(host, queueId, recipient);

export const rejectRecordIdOf = (host: string, at: Date, from: string, to: string): string =>
  sha256(host, isoString(at), from, to);

/**
 * Facts in time order, and those of one time in an order of their own, so that any arrival order
 * gives the same record: delivery lines by their content, provider events by their id (the order
 * they were stored in, the order they are read in).
 */
const byTime = <T extends { at: Date }>(a: T, b: T) => a.at.getTime() - b.at.getTime();
const lineContent = (d: DeliveryFact) =>
  JSON.stringify([d.status, d.dsn, d.response, d.relay, d.delay, d.origTo, d.remoteQueueId, d.recipient]);
const lineOrder = (a: DeliveryFact, b: DeliveryFact) => {
  if (byTime(a, b) !== 0) return byTime(a, b);
  const [x, y] = [lineContent(a), lineContent(b)];
  return x < y ? -1 : x > y ? 1 : 0;
};
const eventOrder = (a: ProviderFact, b: ProviderFact) => byTime(a, b) || a.id - b.id;

/** The record of one recipient of a queued message. */
export function buildQueuedRecord(
  queue: QueueFacts,
  deliveries: DeliveryFact[],
  providerEvents: ProviderFact[],
  company: RecordCompany | null,
): CleanRecord {
  const lines = [...deliveries].sort(lineOrder);
  const last = lines[lines.length - 1];
  const final = [...lines].reverse().find((d) => FINAL.has(d.status));
  const deciding = final ?? [...lines].reverse().find((d) => d.status === 'deferred') ?? last;
  let status: CleanStatus = final ? (final.status as CleanStatus) : lines.length ? 'deferred' : 'queued';
  const events: CleanEvent[] = lines.map((d) => ({
    at: isoString(d.at),
    status: d.status,
    dsn: d.dsn,
    response: d.response,
  }));
  let dsn = deciding?.dsn ?? null;
  let response = deciding?.response ?? null;
  if (queue.expiredAt && !final) {
    status = 'expired';
    events.push({ at: isoString(queue.expiredAt), status: 'expired', dsn: null, response: null });
  }
  let opened = false;
  let clicked = false;
  /** The provider's bounce that decided the outcome: its own verdict and code, not Postfix's. */
  let providerBounce: ProviderFact | null = null;
  for (const event of [...providerEvents].sort(eventOrder)) {
    events.push({ at: isoString(event.at), status: event.type, dsn: event.dsn, response: event.reason });
    if (event.type === 'opened') opened = true;
    else if (event.type === 'clicked') clicked = true;
    else if (!HANDED_OVER.has(status) || status === 'complained') continue;
    else if (event.type === 'complained') status = 'complained';
    else if (event.type === 'delivered' && status === 'sent') status = 'delivered';
    else if (event.type === 'bounced' && (status === 'sent' || status === 'delivered')) {
      status = 'bounced';
      dsn = event.dsn ?? dsn;
      response = event.reason ?? response;
      providerBounce = event;
    }
  }
  events.sort((a, b) => a.at.localeCompare(b.at));
  const times = [queue.firstSeenAt, ...lines.map((d) => d.at), ...providerEvents.map((e) => e.at)];
  if (queue.expiredAt) times.push(queue.expiredAt);
  const recipient = last?.recipient ?? '';
  const from = queue.sender ?? '';
  const relay = deciding?.relay ?? null;
  const quality = deliverabilityOf(
    providerBounce
      ? {
          status,
          to: recipient,
          dsn: providerBounce.dsn,
          response,
          relay,
          providerBounceKind: providerBounce.bounceKind,
        }
      : { status, to: recipient, dsn, response, relay },
  );
  // Every field written out (no spread): one shape for every record, built for each recipient.
  return {
    id: recordIdOf(queue.host, queue.queueId, recipient),
    companyId: company?.id ?? null,
    companyUuid: company?.uuid ?? null,
    host: queue.host,
    queueId: queue.queueId,
    messageId: queue.messageId,
    from,
    senderDomain: senderDomainName(from),
    to: recipient,
    origTo: lines.find((d) => d.origTo)?.origTo ?? null,
    status,
    dsn,
    response,
    relay,
    delay: deciding?.delay ?? null,
    size: queue.size,
    clientIp: queue.clientIp,
    saslUsername: queue.saslUsername,
    remoteQueueId: [...lines].reverse().find((d) => d.remoteQueueId)?.remoteQueueId ?? null,
    attempts: lines.filter((d) => d.status !== 'rejected').length,
    opened,
    clicked,
    firstSeenAt: new Date(Math.min(...times.map((t) => t.getTime()))),
    lastEventAt: new Date(Math.max(...times.map((t) => t.getTime()))),
    events,
    emailId: null,
    provider: quality.provider,
    bounceType: quality.bounceType,
    bounceCategory: quality.bounceCategory,
    bounceRule: quality.bounceRule,
  };
}

/** A NOQUEUE reject: the message never had a queue; one record per line. */
export function buildRejectRecord(
  host: string,
  reject: DeliveryFact & { sender: string | null; clientIp: string | null },
  company: RecordCompany | null,
): CleanRecord {
  const from = reject.sender ?? '';
  const quality = deliverabilityOf({
    status: 'rejected',
    to: reject.recipient,
    dsn: reject.dsn,
    response: reject.response,
    relay: null,
  });
  return {
    id: rejectRecordIdOf(host, reject.at, from, reject.recipient),
    companyId: company?.id ?? null,
    companyUuid: company?.uuid ?? null,
    host,
    queueId: null,
    messageId: null,
    from,
    senderDomain: senderDomainName(from),
    to: reject.recipient,
    origTo: null,
    status: 'rejected',
    dsn: reject.dsn,
    response: reject.response,
    relay: null,
    delay: null,
    size: null,
    clientIp: reject.clientIp,
    saslUsername: null,
    remoteQueueId: null,
    attempts: 0,
    opened: false,
    clicked: false,
    firstSeenAt: reject.at,
    lastEventAt: reject.at,
    events: [{ at: isoString(reject.at), status: 'rejected', dsn: reject.dsn, response: reject.response }],
    emailId: null,
    provider: quality.provider,
    bounceType: quality.bounceType,
    bounceCategory: quality.bounceCategory,
    bounceRule: quality.bounceRule,
  };
}

/**
 * Whether two versions of a record differ in anything stored, field by field: dates by their
 * time (a stored record may hold them as text), numbers by value, the events one by one. The
 * order of the keys does not matter.
 */
export function recordChanged(before: CleanRecord | undefined, after: CleanRecord): boolean {
  if (!before) return true;
  return !sameValue(before, after);
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return false;
  if (a instanceof Date || b instanceof Date)
    return new Date(a as Date).getTime() === new Date(b as Date).getTime();
  if (typeof a === 'number' || typeof b === 'number') return Number(a) === Number(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameValue(x, b[i]))
    );
  }
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  // Every key of either side, without building the union (this runs for each record a batch rebuilds).
  for (const key in left) if (!sameValue(left[key], right[key])) return false;
  for (const key in right) if (!(key in left) && !sameValue(undefined, right[key])) return false;
  return true;
}
