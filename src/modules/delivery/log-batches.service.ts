import { BadRequestException, HttpStatus, Injectable } from '@nestjs/common';
import { DomainError } from '../../common/errors/domain-error';
import { refuseDeepNesting } from '../../common/http/json-depth';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, In, Repository } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { Applied, InboundEventInbox, InboundEventNotApplied, Received } from '../../database/inbound-events';
import { SqlDialect } from '../../database/sql-dialect';
import { TransactionService } from '../../database/transaction.service';
import { sha256 } from './clean-record-builder';
import { DeliveryRecordsService, QueueKey } from './delivery-records.service';
import { LogBatch } from './entities/log-batch.entity';
import { PostfixDelivery } from './entities/postfix-delivery.entity';
import { PostfixQueue } from './entities/postfix-queue.entity';
import { parsePostfixMessage, parseSyslogLine, PostfixEvent } from './parsing/postfix-line';
import { linesFromJson, linesFromNdjson, linesFromText, ShippedLine } from './parsing/shipped-lines';

const CHUNK = 500;

export interface IngestResult {
  /** Entries received (lines, or records of a JSON body). */
  accepted: number;
  /** Entries that are a Postfix line of a form the clean log is built from. */
  parsed: number;
  /** The others: not Postfix, or not understood; never an error. */
  skipped: number;
  /** Clean records created or changed. */
  records: number;
}

/** The batch is stored but could not be applied: 503 so the shipper retries (retry-callbacks also will). */
export class LogBatchNotAppliedError extends DomainError {
  constructor() {
    super(HttpStatus.SERVICE_UNAVAILABLE, 'Log batch stored but not applied yet; retry later');
  }
}

/** A body form: JSON, NDJSON or text, from the request's media type. */
export type ShippedForm = 'json' | 'ndjson' | 'text';

interface ParsedLine {
  host: string;
  at: Date;
  /** The line's message: with host and time, what makes a line seen twice the same. */
  message: string;
  event: PostfixEvent;
}

/** The facts of one queue a batch brings. */
type QueueUpdate = Pick<
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

const FACTS = ['clientHost', 'clientIp', 'saslUsername', 'messageId', 'sender', 'size'] as const;
const queueKey = (host: string, queueId: string) => `${host}\n${queueId}`;

/**
 * The log shipper's batches (integrations.md "Log shipper"), on the inbound-callback pattern: the
 * body is stored as received, deduplicated on its content (the same batch twice is applied
 * once), then applied in one transaction: per-queue facts merged, delivery lines stored once
 * each (by a key of host, time and line), and the clean records of what changed rebuilt.
 */
@Injectable()
export class LogBatchesService {
  private readonly inbox: InboundEventInbox<LogBatch>;

  constructor(
    @InjectRepository(LogBatch) private readonly batches: Repository<LogBatch>,
    private readonly transactions: TransactionService,
    private readonly dialect: SqlDialect,
    private readonly records: DeliveryRecordsService,
    private readonly config: AppConfig,
  ) {
    this.inbox = new InboundEventInbox(batches, 'LogBatches');
  }

  async ingest(body: unknown, form: ShippedForm): Promise<IngestResult> {
    if (typeof body !== 'string') refuseDeepNesting(body);
    const raw = typeof body === 'string' ? body : JSON.stringify(body);
    const receivedAt = new Date();
    const lines = this.parse(raw, form, receivedAt);
    const batch = this.batches.create({
      eventKey: `sha256:${sha256(form, raw)}`,
      webhookId: null,
      raw,
      contentType: form,
      outcome: null,
      attempts: 0,
      lastError: null,
      appliedAt: null,
      records: null,
    });
    let received: Received<LogBatch>;
    try {
      received = await this.inbox.receive(batch, (stored) => this.apply(stored, lines.parsed));
    } catch (e) {
      throw e instanceof InboundEventNotApplied ? new LogBatchNotAppliedError() : e;
    }
    return {
      accepted: lines.accepted,
      parsed: lines.parsed.length,
      skipped: lines.accepted - lines.parsed.length,
      records: received.kind === 'applied' ? (received.applied.record?.records ?? 0) : 0,
    };
  }

  /** For the retry job: batches stored but not applied (a crash, a database error). */
  retryUnapplied(): Promise<number> {
    return this.inbox.retryUnapplied((batch) =>
      this.apply(batch, this.parse(batch.raw, batch.contentType as ShippedForm, batch.createdAt).parsed),
    );
  }

  /**
   * The batch's lines applied and its outcome recorded in one transaction, begun once a queue-lock
   * permit is free (the batch is stored already: waiting loses nothing).
   */
  private apply(batch: LogBatch, lines: ParsedLine[]): Promise<Applied<LogBatch>> {
    return this.transactions.runRowLocking(async (em) => {
      const records = await this.applyLines(em, lines);
      return this.inbox.recordApplied(em, batch, { outcome: 'applied', record: { records } });
    });
  }

  private parse(raw: string, form: ShippedForm, now: Date): { accepted: number; parsed: ParsedLine[] } {
    let shipped: ShippedLine[];
    if (form === 'json') {
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        throw new BadRequestException('Malformed JSON in request body');
      }
      shipped = linesFromJson(body);
    } else {
      shipped = form === 'ndjson' ? linesFromNdjson(raw) : linesFromText(raw);
    }
    const timeZone = this.config.env.LOG_TIMEZONE;
    const parsed: ParsedLine[] = [];
    for (const entry of shipped) {
      if ('skipped' in entry) continue;
      // The whole line, the line without its time, or only `program[pid]: message` (the host then
      // from the record): the three forms give the same events.
      const syslog = parseSyslogLine(entry.line, { now, timeZone });
      if (!syslog) continue;
      const event = parsePostfixMessage(syslog.program, syslog.message);
      if (!event) continue;
      parsed.push({
        host: (entry.host ?? syslog.host ?? 'unknown').toLowerCase().slice(0, 255),
        at: entry.at ?? syslog.at ?? now,
        message: syslog.message,
        event,
      });
    }
    return { accepted: shipped.length, parsed };
  }

  private async applyLines(em: EntityManager, lines: ParsedLine[]): Promise<number> {
    const updates = new Map<string, QueueUpdate>();
    const deliveries: PostfixDelivery[] = [];
    for (const line of lines) {
      const { event, host, at } = line;
      if (event.kind === 'noqueue-reject') {
        if (!event.to) continue;
        deliveries.push(
          em.getRepository(PostfixDelivery).create(
            deliveryLine(line, {
              queueId: null,
              recipient: event.to,
              status: 'rejected',
              dsn: event.dsn ?? null,
              response: `${event.code}${event.dsn ? ` ${event.dsn}` : ''} ${event.response}`,
              sender: event.from.slice(0, 320),
              clientIp: event.clientIp.slice(0, 64),
            }),
          ),
        );
        continue;
      }
      const key = queueKey(host, event.queueId);
      const update = updates.get(key) ?? emptyUpdate(host, event.queueId, at);
      if (at < update.firstSeenAt) update.firstSeenAt = at;
      updates.set(key, update);
      switch (event.kind) {
        case 'client':
          update.clientHost = event.clientHost.slice(0, 255);
          update.clientIp = event.clientIp.slice(0, 64);
          update.saslUsername = event.saslUsername?.slice(0, 255) ?? update.saslUsername;
          break;
        case 'message-id':
          update.messageId = event.messageId.slice(0, 500);
          break;
        case 'from':
          update.sender = event.from.slice(0, 320);
          update.size = event.size ?? update.size;
          break;
        case 'expired':
          update.sender ??= event.from.slice(0, 320);
          update.expiredAt = earliest(update.expiredAt, at);
          break;
        case 'removed':
          update.removedAt = earliest(update.removedAt, at);
          break;
        case 'queue-reject':
          // One recipient of the open transaction refused (or the message, by a milter). Its
          // `from=` is the client's MAIL FROM: the queue's sender when qmgr has not said it yet,
          // never identity (that is the `client=` line's alone).
          update.sender ??= event.from.slice(0, 320);
          if (!event.to) break;
          deliveries.push(
            em.getRepository(PostfixDelivery).create(
              deliveryLine(line, {
                queueId: event.queueId,
                recipient: event.to,
                status: 'rejected',
                dsn: event.dsn?.slice(0, 16) ?? null,
                response: [event.code, event.dsn, event.response]
                  .filter((part) => part !== undefined)
                  .join(' '),
              }),
            ),
          );
          break;
        case 'delivery':
          deliveries.push(
            em.getRepository(PostfixDelivery).create(
              deliveryLine(line, {
                queueId: event.queueId,
                recipient: event.to,
                origTo: event.origTo?.toLowerCase().slice(0, 320) ?? null,
                status: event.status,
                dsn: event.dsn?.slice(0, 16) ?? null,
                relay: event.relay?.slice(0, 300) ?? null,
                delay: event.delay ?? null,
                response: event.response ?? null,
                remoteQueueId: event.remoteQueueId?.slice(0, 200) ?? null,
              }),
            ),
          );
          break;
      }
    }

    const touched = await this.mergeQueues(em, [...updates.values()]);
    const fresh = await this.insertNewDeliveries(em, deliveries);
    for (const d of fresh) {
      if (d.queueId !== null) touched.set(queueKey(d.host, d.queueId), { host: d.host, queueId: d.queueId });
    }
    const rebuilt = await this.records.rebuild(
      em,
      [...touched.values()],
      fresh.filter((d) => d.queueId === null),
    );
    return rebuilt.records;
  }

  /**
   * Merges the batch's facts into the stored queues (a fact once known is kept; the earliest
   * times win) and answers the queues that changed. On PostgreSQL the rows are locked, in id
   * order, so concurrent batches of one queue apply one after the other.
   */
  private async mergeQueues(em: EntityManager, updates: QueueUpdate[]): Promise<Map<string, QueueKey>> {
    const touched = new Map<string, QueueKey>();
    if (!updates.length) return touched;
    const repo = em.getRepository(PostfixQueue);
    // Both columns of the (host, queue_id) index: the queue id alone cannot use it.
    const hosts = [...new Set(updates.map((u) => u.host))];
    const ids = [...new Set(updates.map((u) => u.queueId))];
    const known = new Set<string>();
    for (let i = 0; i < ids.length; i += CHUNK) {
      const rows = await repo.find({
        where: { host: In(hosts), queueId: In(ids.slice(i, i + CHUNK)) },
        select: { host: true, queueId: true },
      });
      for (const row of rows) known.add(queueKey(row.host, row.queueId));
    }
    // New queues are written whole: the usual batch holds every line of its messages.
    const fresh = updates.filter((u) => !known.has(queueKey(u.host, u.queueId)));
    await this.dialect.insertMany(em, PostfixQueue, fresh, 'ignore');
    for (const u of fresh) touched.set(queueKey(u.host, u.queueId), { host: u.host, queueId: u.queueId });
    // Then every row is read (locked on PostgreSQL, in id order) and what it lacks is merged in:
    // facts of a queue already known, or of one a concurrent batch inserted first.
    const stored = new Map<string, PostfixQueue>();
    for (let i = 0; i < ids.length; i += CHUNK) {
      const qb = repo
        .createQueryBuilder('queue')
        .where('queue.host IN (:...hosts) AND queue.queue_id IN (:...ids)', {
          hosts,
          ids: ids.slice(i, i + CHUNK),
        })
        .orderBy('queue.id', 'ASC');
      for (const row of await this.dialect.forUpdate(qb).getMany())
        stored.set(queueKey(row.host, row.queueId), row);
    }
    for (const update of updates) {
      const key = queueKey(update.host, update.queueId);
      const row = stored.get(key);
      if (!row) continue;
      const changes: Partial<PostfixQueue> = {};
      for (const fact of FACTS) {
        if (row[fact] === null && update[fact] !== null) Object.assign(changes, { [fact]: update[fact] });
      }
      for (const time of ['expiredAt', 'removedAt', 'firstSeenAt'] as const) {
        const merged = earliest(row[time], update[time]);
        if (merged && merged.getTime() !== row[time]?.getTime()) changes[time] = merged;
      }
      if (!Object.keys(changes).length) continue;
      await repo.update({ id: row.id }, changes);
      touched.set(key, { host: row.host, queueId: row.queueId });
    }
    return touched;
  }

  /** Stores the delivery lines not seen before; answers them. */
  private async insertNewDeliveries(
    em: EntityManager,
    deliveries: PostfixDelivery[],
  ): Promise<PostfixDelivery[]> {
    const unique = [...new Map(deliveries.map((d) => [d.lineKey, d])).values()];
    const inserted = new Set(await this.dialect.insertNew(em, PostfixDelivery, unique, 'lineKey'));
    return unique.filter((d) => inserted.has(d.lineKey));
  }
}

/**
 * A delivery line as stored: keyed by its host, time and text (a line seen twice is stored once),
 * the recipient lower-cased; what the line does not say is null.
 */
function deliveryLine(
  line: ParsedLine,
  says: Pick<PostfixDelivery, 'queueId' | 'recipient' | 'status'> & Partial<PostfixDelivery>,
): PostfixDelivery {
  return {
    origTo: null,
    dsn: null,
    relay: null,
    delay: null,
    response: null,
    remoteQueueId: null,
    sender: null,
    clientIp: null,
    ...says,
    lineKey: sha256(line.host, line.at.toISOString(), line.message),
    host: line.host,
    at: line.at,
    recipient: says.recipient.toLowerCase().slice(0, 320),
  } as PostfixDelivery;
}

function emptyUpdate(host: string, queueId: string, at: Date): QueueUpdate {
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
