import { isoString } from '../../../common/iso-string';
import { sha256 } from '../clean-record-builder';
import type { PostfixDelivery } from '../entities/postfix-delivery.entity';
import type { PostfixQueue } from '../entities/postfix-queue.entity';
import type { PostfixEvent } from './postfix-line';

/** A Postfix line of a batch: where and when it was written, its message, and what it says. */
export interface ParsedLine {
  host: string;
  at: Date;
  /** The line's message: with host and time, what makes a line seen twice the same. */
  message: string;
  event: PostfixEvent;
}

/** The facts of one queue that a batch brings. */
export type QueueFacts = Pick<
  PostfixQueue,
  | 'host'
  | 'queueId'
  | 'clientHost'
  | 'clientIp'
  | 'saslUsername'
  | 'messageId'
  | 'sender'
  | 'size'
  | 'expiredAt'
  | 'removedAt'
  | 'firstSeenAt'
>;

/** A delivery line (a `to=` line, a QID reject, a NOQUEUE reject) as stored. */
export type DeliveryLine = Omit<PostfixDelivery, 'id'>;

/** What a batch of lines says: the facts of each queue it names, and its delivery lines. */
export interface BatchFacts {
  queues: QueueFacts[];
  deliveries: DeliveryLine[];
}

export interface QueueKey {
  host: string;
  queueId: string;
}

/** A queue's key as one string: host and queue id. */
export const queueKey = (host: string, queueId: string) => `${host}\n${queueId}`;

/** Facts a queue keeps once known: a later line never overwrites one. */
const FACTS = ['clientHost', 'clientIp', 'saslUsername', 'messageId', 'sender', 'size'] as const;
const TIMES = ['expiredAt', 'removedAt', 'firstSeenAt'] as const;

/**
 * The facts of a batch's lines, gathered per queue (lines of one queue may come in any order:
 * a fact once known is kept, the earliest time wins) and its delivery lines, deduplicated on
 * their key (host, time and text). Identity comes from the `client=` line alone; a reject's
 * `from=` is the client's MAIL FROM, kept as the queue's sender only until qmgr says it.
 */
export function factsOf(lines: ParsedLine[]): BatchFacts {
  const queues = new Map<string, QueueFacts>();
  const deliveries = new Map<string, DeliveryLine>();
  const deliver = (line: ParsedLine, says: Parameters<typeof deliveryLine>[1]) => {
    const d = deliveryLine(line, says);
    deliveries.set(d.lineKey, d);
  };
  for (const line of lines) {
    const { event, host, at } = line;
    if (event.kind === 'noqueue-reject') {
      if (event.to) {
        deliver(line, {
          queueId: null,
          recipient: event.to,
          status: 'rejected',
          dsn: event.dsn ?? null,
          response: `${event.code}${event.dsn ? ` ${event.dsn}` : ''} ${event.response}`,
          sender: event.from.slice(0, 320),
          clientIp: event.clientIp.slice(0, 64),
        });
      }
      continue;
    }
    const key = queueKey(host, event.queueId);
    let queue = queues.get(key);
    if (!queue) queues.set(key, (queue = noFacts(host, event.queueId, at)));
    else if (at < queue.firstSeenAt) queue.firstSeenAt = at;
    switch (event.kind) {
      case 'client':
        queue.clientHost = event.clientHost.slice(0, 255);
        queue.clientIp = event.clientIp.slice(0, 64);
        queue.saslUsername = event.saslUsername?.slice(0, 255) ?? queue.saslUsername;
        break;
      case 'message-id':
        queue.messageId = event.messageId.slice(0, 500);
        break;
      case 'from':
        queue.sender = event.from.slice(0, 320);
        queue.size = event.size ?? queue.size;
        break;
      case 'expired':
        queue.sender ??= event.from.slice(0, 320);
        queue.expiredAt = earliest(queue.expiredAt, at);
        break;
      case 'removed':
        queue.removedAt = earliest(queue.removedAt, at);
        break;
      case 'queue-reject':
        // One recipient of the open transaction refused (or the message, by a milter).
        queue.sender ??= event.from.slice(0, 320);
        if (event.to) {
          deliver(line, {
            queueId: event.queueId,
            recipient: event.to,
            status: 'rejected',
            dsn: event.dsn?.slice(0, 16) ?? null,
            response: [event.code, event.dsn, event.response].filter((part) => part !== undefined).join(' '),
          });
        }
        break;
      case 'delivery':
        deliver(line, {
          queueId: event.queueId,
          recipient: event.to,
          origTo: event.origTo?.toLowerCase().slice(0, 320) ?? null,
          status: event.status,
          dsn: event.dsn?.slice(0, 16) ?? null,
          relay: event.relay?.slice(0, 300) ?? null,
          delay: event.delay ?? null,
          response: event.response ?? null,
          remoteQueueId: event.remoteQueueId?.slice(0, 200) ?? null,
        });
        break;
    }
  }
  return { queues: [...queues.values()], deliveries: [...deliveries.values()] };
}

/** What `facts` adds to a stored queue: the facts it lacks, and earlier times. Empty when nothing. */
export function factsToAdd(stored: QueueFacts, facts: QueueFacts): Partial<QueueFacts> {
  const changes: Partial<QueueFacts> = {};
  for (const fact of FACTS) {
    if (stored[fact] === null && facts[fact] !== null) Object.assign(changes, { [fact]: facts[fact] });
  }
  for (const time of TIMES) {
    const merged = earliest(stored[time], facts[time]);
    if (merged && merged.getTime() !== stored[time]?.getTime()) changes[time] = merged;
  }
  return changes;
}

/**
 * A delivery line as stored: keyed by its host, time and text (a line seen twice is stored once),
 * the recipient lower-cased; what the line does not say is null.
 */
function deliveryLine(
  line: ParsedLine,
  says: Pick<DeliveryLine, 'queueId' | 'recipient' | 'status'> & Partial<DeliveryLine>,
): DeliveryLine {
  // Every field written out, no spread: one shape for every line, and this runs for each of them.
  return {
    lineKey: sha256(line.host, isoString(line.at), line.message),
    host: line.host,
    queueId: says.queueId,
    at: line.at,
    recipient: says.recipient.toLowerCase().slice(0, 320),
    origTo: says.origTo ?? null,
    status: says.status,
    dsn: says.dsn ?? null,
    relay: says.relay ?? null,
    delay: says.delay ?? null,
    response: says.response ?? null,
    remoteQueueId: says.remoteQueueId ?? null,
    sender: says.sender ?? null,
    clientIp: says.clientIp ?? null,
  };
}

function noFacts(host: string, queueId: string, at: Date): QueueFacts {
  return {
    host,
    queueId,
    clientHost: null,
    clientIp: null,
    saslUsername: null,
    messageId: null,
    sender: null,
    size: null,
    expiredAt: null,
    removedAt: null,
    firstSeenAt: at,
  };
}

function earliest(a: Date | null, b: Date | null): Date | null {
  if (!a) return b;
  if (!b) return a;
  return a < b ? a : b;
}
