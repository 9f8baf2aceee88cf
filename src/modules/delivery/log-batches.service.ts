import { BadRequestException, Injectable } from '@nestjs/common';
import { appendTo } from '../../common/append-to';
import type { InboundBodyForm, InboundBodyValue } from '../../common/http/inbound-body.decorator';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { InboundEventInbox } from '../../database/inbound-events';
import { SqlDialect } from '../../database/sql-dialect';
import { TransactionService } from '../../database/transaction.service';
import { sha256 } from './clean-record-builder';
import { DeliveryFacts } from './delivery-facts';
import { DeliveryRecordsService } from './delivery-records.service';
import { Job } from '../jobs/job.decorator';
import { countLogBatch } from '../metrics/metrics';
import { LogBatch } from './entities/log-batch.entity';
import { parsePostfixMessage, parseSyslogLine } from './parsing/postfix-line';
import { DeliveryLine, factsOf, ParsedLine, queueKey } from './parsing/queue-facts';
import { RebuildTargets } from './rebuild-targets';
import { linesFromJson, linesFromNdjson, linesFromText, ShippedLine } from './parsing/shipped-lines';

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

/** Entries received, and those that are Postfix lines the clean log is built from. */
interface ParsedLines {
  accepted: number;
  parsed: ParsedLine[];
}

/** A body form: JSON, NDJSON or text, from the request's media type. */
export type ShippedForm = InboundBodyForm;

/**
 * The log shipper's batches (integrations.md "Log shipper"), on the inbound-event pattern
 * (InboundEventInbox.receiveInUnits): deduplicated on their content (the same batch twice is
 * applied once), and stored and applied in one transaction, or on SQLite a unit of lines per
 * transaction (TransactionService.bulkUnit): per-queue facts merged, delivery lines stored once
 * each (by a key of host, time and line), and the clean records of what changed rebuilt. An applied batch keeps its key and outcome, not its body: its lines live on
 * as those facts (kept whole, a relay's batches would grow the database by their own size). A
 * batch that cannot be applied is stored whole, unapplied, for the retry job, and answered 503.
 */
@Injectable()
export class LogBatchesService {
  private readonly inbox: InboundEventInbox<LogBatch>;

  constructor(
    @InjectRepository(LogBatch) private readonly batches: Repository<LogBatch>,
    transactions: TransactionService,
    dialect: SqlDialect,
    private readonly facts: DeliveryFacts,
    private readonly records: DeliveryRecordsService,
    private readonly config: AppConfig,
  ) {
    this.inbox = new InboundEventInbox(batches, 'Log batch', {
      transactions,
      dialect,
      presumed: 'applied',
      keepAppliedRaw: false,
    });
  }

  async ingest({ body, form, digest }: InboundBodyValue): Promise<IngestResult> {
    const receivedAt = new Date();
    const shipped = form === 'json' ? { json: body } : { text: body as string, form };
    const batch = this.batches.create({
      eventKey: `sha256:${sha256(form, digest())}`,
      webhookId: null,
      raw: '',
      contentType: form,
      outcome: null,
      attempts: 0,
      lastError: null,
      appliedAt: null,
      records: null,
    });
    const work = this.linesOf(
      () => this.parse(shipped, receivedAt),
      // The body is kept only while the batch is unapplied: written out then.
      () => (typeof body === 'string' ? body : JSON.stringify(body)),
    );
    const applied = await this.inbox.receiveInUnits(batch, work);
    const lines = work.lines();
    const result = {
      accepted: lines.accepted,
      parsed: lines.parsed.length,
      skipped: lines.accepted - lines.parsed.length,
      records: applied ? work.records : 0,
    };
    if (applied) countLogBatch(result);
    return result;
  }

  /** For the retry job: batches stored but not applied (a crash, a database error), one at a time. */
  @Job('retry-callbacks', { shared: true })
  retryUnapplied(): Promise<number> {
    return this.inbox.retryUnapplied((batch) => {
      const form = batch.contentType as ShippedForm;
      const stored = form === 'json' ? { jsonText: batch.raw } : { text: batch.raw, form };
      return this.inbox.applyInUnits(
        this.linesOf(
          () => this.parse(stored, batch.createdAt),
          () => batch.raw,
        ),
      );
    });
  }

  /**
   * A batch's work for the inbox: its Postfix lines, parsed once, when first asked for (a batch
   * waiting for its turn holds its body only), applied some queues at a time; `records` adds up
   * the clean records each unit changed.
   */
  private linesOf(parse: () => ParsedLines, raw: () => string) {
    let lines: ParsedLines | undefined;
    let groups: ParsedLine[][] | undefined;
    const work = {
      records: 0,
      lines: () => (lines ??= parse()),
      groups: () => (groups ??= byQueue(work.lines().parsed)),
      applyUnit: async (em: EntityManager, unit: ParsedLine[]) => {
        work.records += await this.applyLines(em, unit);
      },
      applied: () => ({ records: work.records }),
      unapplied: () => ({ raw: raw() }),
    };
    return work;
  }

  /** A batch's Postfix lines, from the parsed JSON body, the stored JSON text, or text / NDJSON. */
  private parse(
    body: { json: unknown } | { jsonText: string } | { text: string; form: ShippedForm },
    now: Date,
  ): ParsedLines {
    let shipped: ShippedLine[];
    if ('json' in body) shipped = linesFromJson(body.json);
    else if ('jsonText' in body) {
      let json: unknown;
      try {
        json = JSON.parse(body.jsonText);
      } catch {
        throw new BadRequestException('Malformed JSON in request body');
      }
      shipped = linesFromJson(json);
    } else {
      shipped = body.form === 'ndjson' ? linesFromNdjson(body.text) : linesFromText(body.text);
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
    const facts = factsOf(lines);
    const targets = new RebuildTargets();
    const { touched, created } = await this.facts.mergeQueues(
      em,
      await this.records.withSettledCompanies(facts.queues),
    );
    for (const queue of touched.values()) targets.wholeQueue(queue);
    /** Every line of the queues created now: this batch's (DeliveryFacts.mergeQueues). */
    const linesOfCreated = new Map<string, DeliveryLine[]>([...created].map((key) => [key, []]));
    const others: DeliveryLine[] = [];
    for (const d of facts.deliveries) {
      const ofCreated = d.queueId === null ? undefined : linesOfCreated.get(queueKey(d.host, d.queueId));
      if (ofCreated) ofCreated.push(d);
      else others.push(d);
    }
    const fresh = await this.facts.insertNewDeliveries(em, others, [...linesOfCreated.values()].flat());
    for (const d of fresh) {
      if (d.queueId !== null) targets.recipient({ host: d.host, queueId: d.queueId }, d.recipient);
    }
    const rebuilt = await this.records.rebuild(
      em,
      targets,
      fresh.filter((d) => d.queueId === null),
      linesOfCreated,
    );
    return rebuilt.records;
  }
}

/**
 * The lines by queue, in the order each queue first appears: a unit of work holds a queue's lines
 * whole, so its records are built once from them (a queue split over units would be read back
 * and rebuilt by each). A line of no queue (`NOQUEUE: reject`) is a group of its own.
 */
function byQueue(lines: ParsedLine[]): ParsedLine[][] {
  const groups = new Map<string, ParsedLine[]>();
  const alone: ParsedLine[][] = [];
  for (const line of lines) {
    if (!('queueId' in line.event)) {
      alone.push([line]);
      continue;
    }
    appendTo(groups, queueKey(line.host, line.event.queueId), line);
  }
  return [...groups.values(), ...alone];
}
