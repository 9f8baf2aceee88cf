import { Injectable, Logger } from '@nestjs/common';
import type { Client } from '@elastic/elasticsearch';
import type {
  AggregationsAggregate,
  QueryDslQueryContainer,
  SearchHit,
  SortResults,
} from '@elastic/elasticsearch/lib/api/types';
import {
  CLEAN_STATUSES,
  CleanRecord,
  CleanStatus,
  emptyCounts,
  LogCounts,
  LogFilter,
  LogPosition,
} from './clean-record';
import { BounceBreakdown, GroupedCounts, LogIndex, RecordLocation } from './log-index';

export const CLEAN_LOG_ALIAS = 'clean-logs';
const TEMPLATE = 'clean-logs';
const STREAM_BATCH = 1000;
const MAX_TERMS = 10_000;

/** A record as stored: dates as ISO text, plus the recipient's domain for the bounce report. */
type CleanDocument = Omit<CleanRecord, 'firstSeenAt' | 'lastEventAt'> & {
  firstSeenAt: string;
  lastEventAt: string;
  toDomain: string;
};

const keyword = { type: 'keyword' } as const;

/**
 * The index template's mapping: keywords for ids, statuses and addresses; dates; `response` as
 * text. One entry per field of a stored document (the compiler holds it to CleanDocument).
 */
export const CLEAN_LOG_MAPPING = {
  dynamic: 'strict' as const,
  properties: {
    id: keyword,
    companyId: { type: 'long' as const },
    companyUuid: keyword,
    host: keyword,
    queueId: keyword,
    messageId: keyword,
    from: keyword,
    senderDomain: keyword,
    to: keyword,
    toDomain: keyword,
    origTo: keyword,
    status: keyword,
    dsn: keyword,
    response: { type: 'text' as const },
    relay: keyword,
    delay: { type: 'float' as const },
    size: { type: 'integer' as const },
    clientIp: keyword,
    saslUsername: keyword,
    remoteQueueId: keyword,
    attempts: { type: 'integer' as const },
    opened: { type: 'boolean' as const },
    clicked: { type: 'boolean' as const },
    firstSeenAt: { type: 'date' as const },
    lastEventAt: { type: 'date' as const },
    events: { type: 'object' as const, enabled: false },
    emailId: keyword,
    provider: keyword,
    bounceType: keyword,
    bounceCategory: keyword,
    bounceRule: keyword,
  } satisfies Record<keyof CleanDocument, unknown>,
};

/**
 * The clean-log index in Elasticsearch (ELASTICSEARCH_NODE): monthly indices
 * `clean-logs-YYYY.MM` (by the record's first sighting, so an update never moves a record)
 * behind the alias `clean-logs`, created from an index template at start; writes through `_bulk`
 * with the record id as `_id` (idempotent upserts); summaries with aggregations; the log with
 * `search_after`; the export with a point in time.
 *
 * Elasticsearch is not transactional with the SQL facts the records are built from: a write is
 * visible at once (`refresh: wait_for`), before the caller's transaction commits; should that
 * roll back, the next rebuild of the record writes it right, since records are computed whole.
 */
@Injectable()
export class ElasticsearchLogIndex extends LogIndex {
  readonly kind = 'elasticsearch' as const;
  private readonly logger = new Logger(ElasticsearchLogIndex.name);

  constructor(private readonly es: Client) {
    super();
  }

  /**
   * The template installed once, by chooseLogIndex at start (not a Nest hook: Nest would call it
   * again on the provider the factory made), a failure logged rather than thrown.
   */
  async installTemplate(): Promise<void> {
    try {
      await this.ensureTemplate();
    } catch (e) {
      // The service still starts (the relay decision does not need the index); /health says down.
      this.logger.error({ err: e }, 'Could not install the clean-log index template');
    }
  }

  async ensureTemplate(): Promise<void> {
    await this.es.indices.putIndexTemplate({
      name: TEMPLATE,
      index_patterns: [`${CLEAN_LOG_ALIAS}-*`],
      template: {
        settings: { number_of_shards: 1 },
        mappings: CLEAN_LOG_MAPPING,
        aliases: { [CLEAN_LOG_ALIAS]: {} },
      },
    });
  }

  async write(records: CleanRecord[]): Promise<void> {
    if (!records.length) return;
    const operations = records.flatMap((r) => [{ index: { _index: indexOf(r), _id: r.id } }, toDocument(r)]);
    const answer = await this.es.bulk({ operations, refresh: 'wait_for' });
    if (answer.errors) {
      const failed = answer.items.find((item) => item.index?.error);
      throw new Error(
        `Elasticsearch refused clean record ${failed?.index?._id ?? '?'}: ${failed?.index?.error?.reason ?? 'unknown error'}`,
      );
    }
  }

  async getMany(ids: string[]): Promise<CleanRecord[]> {
    if (!ids.length) return [];
    const answer = await this.es.search<CleanDocument>({
      index: CLEAN_LOG_ALIAS,
      size: ids.length,
      query: { ids: { values: ids } },
    });
    return answer.hits.hits.flatMap(fromHit);
  }

  async locate(
    keys: Array<{ recipient: string; messageId?: string; remoteQueueId?: string }>,
  ): Promise<RecordLocation[]> {
    const messageIds = [...new Set(keys.flatMap((k) => (k.messageId ? [k.messageId] : [])))];
    const remoteIds = [...new Set(keys.flatMap((k) => (k.remoteQueueId ? [k.remoteQueueId] : [])))];
    if (!messageIds.length && !remoteIds.length) return [];
    const should: QueryDslQueryContainer[] = [];
    if (messageIds.length) should.push({ terms: { messageId: messageIds } });
    if (remoteIds.length) should.push({ terms: { remoteQueueId: remoteIds } });
    const answer = await this.es.search<CleanDocument>({
      index: CLEAN_LOG_ALIAS,
      size: MAX_TERMS,
      _source: ['id', 'host', 'queueId', 'to', 'messageId', 'companyId'],
      query: {
        bool: {
          should,
          minimum_should_match: 1,
          filter: [{ terms: { to: [...new Set(keys.map((k) => k.recipient))] } }],
        },
      },
    });
    return answer.hits.hits.flatMap((hit) =>
      hit._source
        ? [
            {
              id: hit._source.id,
              host: hit._source.host,
              queueId: hit._source.queueId,
              recipient: hit._source.to,
              messageId: hit._source.messageId,
              companyId: hit._source.companyId,
            },
          ]
        : [],
    );
  }

  async countsByDay(filter: LogFilter): Promise<Array<{ day: string; counts: LogCounts }>> {
    const answer = await this.es.search({
      index: CLEAN_LOG_ALIAS,
      size: 0,
      query: queryOf(filter),
      aggs: {
        days: {
          date_histogram: {
            field: 'lastEventAt',
            calendar_interval: 'day',
            format: 'yyyy-MM-dd',
            time_zone: 'UTC',
            min_doc_count: 1,
          },
          aggs: COUNT_AGGS,
        },
      },
    });
    return bucketsOf(answer.aggregations?.days).map((bucket) => ({
      day: String(bucket.key_as_string ?? bucket.key),
      counts: countsOf(bucket),
    }));
  }

  async countsBy(filter: LogFilter, key: 'senderDomain' | 'companyId'): Promise<GroupedCounts[]> {
    const answer = await this.es.search({
      index: CLEAN_LOG_ALIAS,
      size: 0,
      query: queryOf(filter),
      aggs: { groups: { terms: { field: key, size: MAX_TERMS }, aggs: COUNT_AGGS } },
    });
    return bucketsOf(answer.aggregations?.groups).map((bucket) => ({
      key: key === 'companyId' ? Number(bucket.key) : String(bucket.key),
      counts: countsOf(bucket),
    }));
  }

  async bounces(filter: LogFilter, top: number): Promise<BounceBreakdown> {
    const answer = await this.es.search<CleanDocument>({
      index: CLEAN_LOG_ALIAS,
      size: 0,
      query: queryOf({ ...filter, status: 'bounced' }),
      aggs: {
        reasons: {
          terms: { field: 'dsn', size: top, missing: '' },
          aggs: { example: { top_hits: { size: 1, _source: ['response'] } } },
        },
        domains: { terms: { field: 'toDomain', size: top } },
      },
    });
    return {
      reasons: bucketsOf(answer.aggregations?.reasons).map((bucket) => {
        const example = bucket.example as {
          hits?: { hits?: Array<{ _source?: { response?: string | null } }> };
        };
        return {
          dsn: bucket.key === '' ? null : String(bucket.key),
          count: bucket.doc_count,
          example: example.hits?.hits?.[0]?._source?.response ?? null,
        };
      }),
      domains: bucketsOf(answer.aggregations?.domains).map((bucket) => ({
        domain: String(bucket.key),
        count: bucket.doc_count,
      })),
    };
  }

  async search(
    filter: LogFilter,
    limit: number,
    after?: LogPosition,
  ): Promise<{ items: CleanRecord[]; total: number }> {
    const answer = await this.es.search<CleanDocument>({
      index: CLEAN_LOG_ALIAS,
      size: limit,
      query: queryOf(filter),
      sort: [{ lastEventAt: 'desc' }, { id: 'desc' }],
      track_total_hits: true,
      ...(after && { search_after: [after.at.getTime(), after.id] }),
    });
    const total = answer.hits.total;
    return {
      items: answer.hits.hits.flatMap(fromHit),
      total: typeof total === 'number' ? total : (total?.value ?? 0),
    };
  }

  async *stream(filter: LogFilter, max: number): AsyncIterable<CleanRecord[]> {
    const pit = await this.es.openPointInTime({ index: CLEAN_LOG_ALIAS, keep_alive: '1m' });
    let pitId = pit.id;
    try {
      let after: SortResults | undefined;
      let left = max;
      while (left > 0) {
        const answer = await this.es.search<CleanDocument>({
          size: Math.min(STREAM_BATCH, left),
          query: queryOf(filter),
          sort: [{ lastEventAt: 'desc' }, { id: 'desc' }],
          pit: { id: pitId, keep_alive: '1m' },
          _source: { excludes: ['events'] },
          ...(after && { search_after: after }),
        });
        pitId = answer.pit_id ?? pitId;
        const hits = answer.hits.hits;
        if (!hits.length) return;
        yield hits.flatMap(fromHit);
        left -= hits.length;
        after = hits[hits.length - 1].sort;
      }
    } finally {
      await this.es.closePointInTime({ id: pitId }).catch(() => undefined);
    }
  }

  unclassified(): Promise<CleanRecord[]> {
    return Promise.resolve([]);
  }

  async isUp(): Promise<boolean> {
    try {
      return await this.es.ping();
    } catch {
      return false;
    }
  }
}

const flag = (field: 'opened' | 'clicked') => ({ filter: { term: { [field]: true } } });
const COUNT_AGGS = {
  statuses: { terms: { field: 'status', size: CLEAN_STATUSES.length } },
  opened: flag('opened'),
  clicked: flag('clicked'),
};

interface Bucket {
  key: string | number;
  key_as_string?: string;
  doc_count: number;
  [sub: string]: unknown;
}

function bucketsOf(aggregate: AggregationsAggregate | undefined): Bucket[] {
  const buckets = (aggregate as { buckets?: unknown } | undefined)?.buckets;
  return Array.isArray(buckets) ? (buckets as Bucket[]) : [];
}

function countsOf(bucket: Bucket): LogCounts {
  const counts = emptyCounts();
  counts.processed = bucket.doc_count;
  for (const status of bucketsOf(bucket.statuses as AggregationsAggregate)) {
    if ((CLEAN_STATUSES as readonly string[]).includes(String(status.key))) {
      counts[status.key as CleanStatus] = status.doc_count;
    }
  }
  counts.opened = (bucket.opened as { doc_count?: number } | undefined)?.doc_count ?? 0;
  counts.clicked = (bucket.clicked as { doc_count?: number } | undefined)?.doc_count ?? 0;
  return counts;
}

/** The filter as a bool query: a range on lastEventAt, terms for the rest, wildcards for `search`. */
export function queryOf(f: LogFilter): QueryDslQueryContainer {
  const filter: QueryDslQueryContainer[] = [
    { range: { lastEventAt: { gte: f.from.toISOString(), lt: f.toExclusive.toISOString() } } },
  ];
  const term = (field: string, value: string | number | undefined) => {
    if (value !== undefined && value !== '') filter.push({ term: { [field]: value } });
  };
  if (f.companyId !== 'all') term('companyId', f.companyId);
  term('status', f.status);
  term('to', f.recipient?.toLowerCase());
  term('from', f.sender);
  term('senderDomain', f.senderDomain);
  term('messageId', f.messageId);
  term('queueId', f.queueId);
  term('provider', f.provider);
  term('bounceCategory', f.bounceCategory);
  if (f.search) {
    const value = `*${f.search.replace(/[*?\\]/g, (c) => `\\${c}`)}*`;
    filter.push({
      bool: {
        should: ['to', 'from', 'messageId', 'queueId'].map((field) => ({
          wildcard: { [field]: { value, case_insensitive: true } },
        })),
        minimum_should_match: 1,
      },
    });
  }
  return { bool: { filter } };
}

/** `clean-logs-YYYY.MM` of the record's first sighting (UTC). */
export function indexOf(record: Pick<CleanRecord, 'firstSeenAt'>): string {
  const first = new Date(record.firstSeenAt);
  return `${CLEAN_LOG_ALIAS}-${first.getUTCFullYear()}.${String(first.getUTCMonth() + 1).padStart(2, '0')}`;
}

function toDocument(r: CleanRecord): CleanDocument {
  return {
    ...r,
    firstSeenAt: new Date(r.firstSeenAt).toISOString(),
    lastEventAt: new Date(r.lastEventAt).toISOString(),
    toDomain: r.to.slice(r.to.lastIndexOf('@') + 1).toLowerCase(),
  };
}

/** A stored document read back as its record (the export's come without `events`). */
function fromHit(hit: SearchHit<CleanDocument>): CleanRecord[] {
  const doc = hit._source;
  if (!doc) return [];
  const { toDomain: _toDomain, ...stored } = doc;
  return [
    {
      ...stored,
      firstSeenAt: new Date(stored.firstSeenAt),
      lastEventAt: new Date(stored.lastEventAt),
      events: stored.events ?? [],
      // Documents written before deliverability.md have none of its fields.
      provider: stored.provider ?? null,
      bounceType: stored.bounceType ?? null,
      bounceCategory: stored.bounceCategory ?? null,
      bounceRule: stored.bounceRule ?? null,
    },
  ];
}
