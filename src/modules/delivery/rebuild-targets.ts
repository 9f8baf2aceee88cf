import { QueueKey, queueKey } from './parsing/queue-facts';

/**
 * The clean records a change asks to rebuild, by queue: every recipient's (the queue's own facts
 * changed, or its company is not settled yet), or only some (new delivery lines, provider events):
 * a record is built from its queue's facts and its own recipient's lines and events, so a line
 * for one recipient of a queue of a thousand rebuilds one record, not a thousand.
 */
export class RebuildTargets {
  private readonly byQueue = new Map<string, { queue: QueueKey; recipients: Set<string> | 'all' }>();

  /** Every record of the queue. */
  wholeQueue(queue: QueueKey): void {
    this.byQueue.set(queueKey(queue.host, queue.queueId), { queue, recipients: 'all' });
  }

  /** The record of one recipient of the queue (nothing more when the whole queue is asked already). */
  recipient(queue: QueueKey, recipient: string): void {
    const key = queueKey(queue.host, queue.queueId);
    const target = this.byQueue.get(key);
    if (!target) this.byQueue.set(key, { queue, recipients: new Set([recipient]) });
    else if (target.recipients !== 'all') target.recipients.add(recipient);
  }

  /** A copy of these targets with every record of `queues` asked for (these targets stay as they are). */
  withWholeQueues(queues: Iterable<QueueKey>): RebuildTargets {
    const copy = new RebuildTargets();
    for (const [key, { queue, recipients }] of this.byQueue)
      copy.byQueue.set(key, { queue, recipients: recipients === 'all' ? 'all' : new Set(recipients) });
    for (const queue of queues) copy.wholeQueue(queue);
    return copy;
  }

  /** A copy of these targets without the queues of these keys (`queueKey`). */
  without(keys: Iterable<string>): RebuildTargets {
    const copy = new RebuildTargets();
    for (const [key, target] of this.byQueue) copy.byQueue.set(key, target);
    for (const key of keys) copy.byQueue.delete(key);
    return copy;
  }

  get queues(): QueueKey[] {
    return [...this.byQueue.values()].map((t) => t.queue);
  }

  /** Whether a delivery line (of a queue) is of a record asked for. */
  wants(line: { host: string; queueId: string | null; recipient: string }): boolean {
    if (line.queueId === null) return false;
    const target = this.byQueue.get(queueKey(line.host, line.queueId));
    return target !== undefined && (target.recipients === 'all' || target.recipients.has(line.recipient));
  }

  /** The recipients asked for in the queue; null when every one is. */
  recipientsOf(queue: QueueKey): ReadonlySet<string> | null {
    const recipients = this.byQueue.get(queueKey(queue.host, queue.queueId))?.recipients;
    return recipients === undefined || recipients === 'all' ? null : recipients;
  }
}
