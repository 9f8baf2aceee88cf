import { Injectable } from '@nestjs/common';
import { Readable } from 'node:stream';
import { csvLine } from '../../common/csv';
import { deliverabilityOf } from '../deliverability/record-deliverability';
import { NotFoundError } from '../../common/errors/domain-error';
import { DAY_MS, reportWindow } from '../../common/validation/date-filter';
import { AppConfig } from '../../config/app-config';
import { chunks } from '../../database/chunks';
import { CompaniesService } from '../companies/companies.service';
import { CleanRecord, emptyCounts, LogCounts, LogFilter } from '../log-index/clean-record';
import { LogIndex } from '../log-index/log-index';
import {
  AdminLogsQueryDto,
  CompaniesReportQueryDto,
  LogFilterQueryDto,
  ReportInterval,
  ReportWindowQueryDto,
  SummaryQueryDto,
} from './dto/report-requests.dto';
import {
  BouncesReportDto,
  CleanLogDto,
  CompaniesReportDto,
  CompanyReportDto,
  DomainsReportDto,
  LogsPageDto,
  ReportCountsDto,
  ReportRatesDto,
  ReportSummaryDto,
} from './dto/report-responses.dto';
import { LogCursors } from './log-cursor';

const MAX_WINDOW_DAYS = 366;
/** endpoints.md: an export holds at most this many rows. */
export const MAX_EXPORT_ROWS = 1_000_000;
/**
 * Rows per chunk of the CSV stream (some 30 KB). A chunk of a whole page (500 rows, ~150 KB) is
 * over V8's largest ordinary object (128 KB): each went to the large-object space, which only a
 * full collection empties, and ~35 MB of them gathered between two (1,000,000 rows: the export's
 * memory grew by 62–68 MB against quality.md's 64); smaller chunks die young.
 */
const CSV_ROWS_PER_CHUNK = 100;
const TOP = 20;
export const LOG_NOT_FOUND = 'Log record not found';

/** Whose records: one company's (a user's own, or the one an admin names), or every company's. */
export type ReportScope = LogFilter['companyId'];

const CSV_COLUMNS = [
  'id',
  'last_event_at',
  'first_seen_at',
  'status',
  'from',
  'to',
  'message_id',
  'queue_id',
  'dsn',
  'response',
  'relay',
  'delay',
  'size',
  'attempts',
  'opened',
  'clicked',
  'provider',
  'bounce_type',
  'bounce_category',
  'bounce_rule',
];

/**
 * The delivery reports of endpoints.md over the clean-log index: summaries exact to their
 * formulas, the log with opaque signed cursors, its CSV export streamed, and the per-domain,
 * bounce and per-company breakdowns.
 */
@Injectable()
export class ReportsService {
  private readonly cursors: LogCursors;

  constructor(
    private readonly index: LogIndex,
    private readonly companies: CompaniesService,
    config: AppConfig,
  ) {
    this.cursors = new LogCursors(config.encryptionKey);
  }

  async summary(scope: ReportScope, q: SummaryQueryDto): Promise<ReportSummaryDto> {
    const filter = {
      ...this.window(scope, q),
      ...(q.senderDomain && { senderDomain: q.senderDomain.toLowerCase() }),
    };
    const days = await this.index.countsByDay(filter);
    const interval = q.interval ?? 'day';
    const series = new Map<string, LogCounts>();
    for (const date of periodsOf(filter.from, filter.toExclusive, interval)) series.set(date, emptyCounts());
    const totals = emptyCounts();
    for (const { day, counts } of days) {
      const period = series.get(periodOf(day, interval));
      if (period) add(period, counts);
      add(totals, counts);
    }
    return {
      totals: countsDto(totals),
      rates: ratesOf(totals),
      series: [...series].map(([date, counts]) => ({ date, ...countsDto(counts) })),
    };
  }

  async logs(
    scope: ReportScope,
    q: LogFilterQueryDto & { limit: number; cursor?: string },
  ): Promise<LogsPageDto> {
    const filter = this.logFilter(scope, q);
    const after = q.cursor ? this.cursors.decode(q.cursor) : undefined;
    const { items, total } = await this.index.search(filter, q.limit, after);
    const last = items[items.length - 1];
    // A full page may be followed by more; the next (possibly empty) page says so.
    const nextCursor =
      items.length === q.limit && last ? this.cursors.encode({ at: last.lastEventAt, id: last.id }) : null;
    return { items: items.map(toDto), meta: { limit: q.limit, nextCursor, totalItems: total } };
  }

  async log(companyId: number, id: string): Promise<CleanLogDto> {
    const [record] = await this.index.getMany([id]);
    if (!record || record.companyId !== companyId) throw new NotFoundError(LOG_NOT_FOUND);
    return toDto(record);
  }

  /**
   * The CSV of the filter as a stream that pulls: Readable.from asks the generator for the next page
   * only when the response wants more (Fastify pipes it, and the pipe pauses while the socket is
   * full), so a slow reader leaves the rest of the log unread, not buffered.
   */
  export(scope: ReportScope, q: LogFilterQueryDto): Readable {
    const pages = this.index.stream(this.logFilter(scope, q), MAX_EXPORT_ROWS);
    return Readable.from(csvChunks(pages), { objectMode: false, highWaterMark: 64 * 1024 });
  }

  async domains(scope: ReportScope, q: ReportWindowQueryDto): Promise<DomainsReportDto> {
    const groups = await this.index.countsBy(this.window(scope, q), 'senderDomain');
    return {
      items: groups
        .map(({ key, counts }) => ({
          domain: key === null ? null : String(key),
          counts: countsDto(counts),
          rates: ratesOf(counts),
        }))
        .sort(
          (a, b) =>
            b.counts.processed - a.counts.processed || String(a.domain).localeCompare(String(b.domain)),
        ),
    };
  }

  bounces(scope: ReportScope, q: ReportWindowQueryDto): Promise<BouncesReportDto> {
    return this.index.bounces(this.window(scope, q), TOP);
  }

  async companiesReport(q: CompaniesReportQueryDto): Promise<CompaniesReportDto> {
    const groups = (await this.index.countsBy(this.window('all', q), 'companyId')).filter(
      (g) => g.key !== null,
    );
    const companies = new Map(
      (await this.companies.namesAndQuota(groups.map((g) => Number(g.key)))).map((c) => [c.id, c]),
    );
    const items: CompanyReportDto[] = groups.flatMap(({ key, counts }) => {
      const company = companies.get(Number(key));
      if (!company) return [];
      return [
        {
          companyUuid: company.uuid,
          name: company.name,
          counts: countsDto(counts),
          rates: ratesOf(counts),
          quota: {
            limit: company.quota,
            used: company.used,
            remaining: Math.max(0, company.quota - company.used),
          },
        },
      ];
    });
    const sort = q.sort ?? 'processed:desc';
    const value = (i: CompanyReportDto) =>
      sort === 'bounceRate:desc'
        ? i.rates.bounce
        : sort === 'complaintRate:desc'
          ? i.rates.complaint
          : i.counts.processed;
    items.sort(
      (a, b) =>
        value(b) - value(a) || b.counts.processed - a.counts.processed || a.name.localeCompare(b.name),
    );
    return { items };
  }

  /** An admin's `companyUuid`: that company (404 when unknown), else every company. */
  async adminScope(q: Pick<AdminLogsQueryDto, 'companyUuid'>): Promise<ReportScope> {
    return q.companyUuid ? await this.companies.idOf(q.companyUuid) : 'all';
  }

  private logFilter(scope: ReportScope, q: LogFilterQueryDto): LogFilter {
    return {
      ...this.window(scope, q),
      ...(q.status && { status: q.status }),
      ...(q.recipient && { recipient: q.recipient.trim().toLowerCase() }),
      ...(q.sender && { sender: q.sender.trim() }),
      ...(q.messageId && { messageId: q.messageId.trim().replace(/^<(.*)>$/, '$1') }),
      ...(q.queueId && { queueId: q.queueId }),
      ...(q.search && { search: q.search }),
      ...(q.provider && { provider: q.provider }),
      ...(q.category && { bounceCategory: q.category }),
    };
  }

  private window(scope: ReportScope, q: ReportWindowQueryDto): LogFilter {
    return { ...reportWindow(q.from, q.to, MAX_WINDOW_DAYS), companyId: scope };
  }
}

function add(into: LogCounts, counts: LogCounts): void {
  for (const key of Object.keys(into) as Array<keyof LogCounts>) into[key] += counts[key];
}

function countsDto(c: LogCounts): ReportCountsDto {
  return {
    processed: c.processed,
    sent: c.sent,
    delivered: c.delivered,
    deferred: c.deferred,
    bounced: c.bounced,
    rejected: c.rejected,
    expired: c.expired,
    complained: c.complained,
    opened: c.opened,
    clicked: c.clicked,
  };
}

/** endpoints.md: fractions of `processed`, all 0 when it is 0. */
export function ratesOf(c: LogCounts): ReportRatesDto {
  if (c.processed === 0) return { delivery: 0, bounce: 0, complaint: 0 };
  return {
    delivery: (c.sent + c.delivered + c.complained) / c.processed,
    bounce: c.bounced / c.processed,
    complaint: c.complained / c.processed,
  };
}

/** The first day (`YYYY-MM-DD`) of the period a day falls in; weeks start on Monday. */
export function periodOf(day: string, interval: ReportInterval): string {
  if (interval === 'day') return day;
  if (interval === 'month') return `${day.slice(0, 7)}-01`;
  const date = new Date(`${day}T00:00:00.000Z`);
  const sinceMonday = (date.getUTCDay() + 6) % 7;
  return new Date(date.getTime() - sinceMonday * DAY_MS).toISOString().slice(0, 10);
}

/** Every period that meets [from, toExclusive), oldest first. */
function periodsOf(from: Date, toExclusive: Date, interval: ReportInterval): string[] {
  const periods = new Set<string>();
  for (
    let t = Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate());
    t < toExclusive.getTime();
    t += DAY_MS
  ) {
    periods.add(periodOf(new Date(t).toISOString().slice(0, 10), interval));
  }
  return [...periods];
}

/**
 * The record as the API shows it: without the index's own keys (company id, sender domain), its
 * bounce class as one object. A record built before providers were decided is classified as it is
 * read until the backfill reaches it.
 */
function toDto(record: CleanRecord): CleanLogDto {
  const {
    companyId: _companyId,
    senderDomain: _senderDomain,
    provider,
    bounceType,
    bounceCategory,
    bounceRule,
    ...dto
  } = record;
  const decided = provider ? { provider, bounceType, bounceCategory, bounceRule } : deliverabilityOf(record);
  return {
    ...dto,
    provider: decided.provider,
    bounce:
      decided.bounceType && decided.bounceCategory && decided.bounceRule
        ? { type: decided.bounceType, category: decided.bounceCategory, rule: decided.bounceRule }
        : null,
  };
}

/** The CSV of pages of records: the header, then each page CSV_ROWS_PER_CHUNK rows at a time. */
export async function* csvChunks(pages: AsyncIterable<CleanRecord[]>): AsyncGenerator<string> {
  yield csvLine(CSV_COLUMNS);
  for await (const page of pages) {
    for (const rows of chunks(page, CSV_ROWS_PER_CHUNK)) yield rows.map(csvRow).join('');
  }
}

function csvRow(r: CleanRecord): string {
  return csvLine([
    r.id,
    r.lastEventAt.toISOString(),
    r.firstSeenAt.toISOString(),
    r.status,
    r.from,
    r.to,
    r.messageId ?? '',
    r.queueId ?? '',
    r.dsn ?? '',
    r.response ?? '',
    r.relay ?? '',
    r.delay === null ? '' : String(r.delay),
    r.size === null ? '' : String(r.size),
    String(r.attempts),
    String(r.opened),
    String(r.clicked),
    ...csvDeliverability(r),
  ]);
}

function csvDeliverability(r: CleanRecord): string[] {
  const d = r.provider ? r : deliverabilityOf(r);
  return [d.provider ?? '', d.bounceType ?? '', d.bounceCategory ?? '', d.bounceRule ?? ''];
}
