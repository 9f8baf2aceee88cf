import type { EntityManager } from 'typeorm';
import type { CleanRecord, LogCounts, LogFilter, LogPosition } from './clean-record';

/** A record's id and the Postfix queue it belongs to (null for a NOQUEUE reject). */
export interface RecordLocation {
  id: string;
  host: string;
  queueId: string | null;
  recipient: string;
  messageId: string | null;
  companyId: number | null;
}

/** Records of a window grouped by one key. */
export interface GroupedCounts {
  key: string | number | null;
  counts: LogCounts;
}

export interface BounceBreakdown {
  /** Bounced records by DSN, most first, with one response as an example. */
  reasons: Array<{ dsn: string | null; count: number; example: string | null }>;
  /** Bounced records by recipient domain, most first. */
  domains: Array<{ domain: string; count: number }>;
}

/**
 * The clean-log index (integrations.md "Clean-log index"): where records are written and
 * searched. SQL tables of the service's own database by default (SqlLogIndex), Elasticsearch
 * when ELASTICSEARCH_NODE is set. Records are written whole (the ingest computes them from the
 * stored Postfix facts and provider events), so a write is an idempotent upsert by id.
 */
export abstract class LogIndex {
  abstract readonly kind: 'sql' | 'elasticsearch';

  /**
   * Upserts whole records. `previous`: the stored versions of these records when the caller has
   * just read them; `em`: the caller's transaction, used by the SQL index.
   */
  abstract write(records: CleanRecord[], previous?: CleanRecord[], em?: EntityManager): Promise<void>;

  /** The records with these ids that exist. */
  abstract getMany(ids: string[], em?: EntityManager): Promise<CleanRecord[]>;

  /** Where the records of these provider events are: those of the recipient whose messageId or remoteQueueId is given. */
  abstract locate(
    keys: Array<{ recipient: string; messageId?: string; remoteQueueId?: string }>,
    em?: EntityManager,
  ): Promise<RecordLocation[]>;

  /** Counts of the window, in total and per UTC day (`YYYY-MM-DD`). */
  abstract countsByDay(filter: LogFilter): Promise<Array<{ day: string; counts: LogCounts }>>;

  abstract countsBy(filter: LogFilter, key: 'senderDomain' | 'companyId'): Promise<GroupedCounts[]>;

  abstract bounces(filter: LogFilter, top: number): Promise<BounceBreakdown>;

  /** Newest first (lastEventAt desc, id desc), after `after`; `total` counts the whole filter. */
  abstract search(
    filter: LogFilter,
    limit: number,
    after?: LogPosition,
  ): Promise<{ items: CleanRecord[]; total: number }>;

  /**
   * Every record of the filter, newest first, without their `events` (for the CSV export): read in
   * batches, each only when the consumer asks for the next, and letting the event loop run between
   * them (an export must hold no other request, quality.md).
   */
  abstract stream(filter: LogFilter, max: number): AsyncIterable<CleanRecord[]>;

  /**
   * Up to `limit` records built before providers and bounce classes were decided (deliverability.md),
   * in id order, for the backfill. Elasticsearch answers none: its older documents are classified
   * as they are read.
   */
  abstract unclassified(limit: number, em?: EntityManager): Promise<CleanRecord[]>;

  /** Whether the index answers. */
  abstract isUp(): Promise<boolean>;
}
