import type { DataSource } from 'typeorm';
import type { DatabaseRuntime, ReadRow } from '../../database/database-runtime';
import { EntityRowReader } from '../../database/entity-row-reader';
import { Domain, DomainStatus } from './entities/domain.entity';

/** One page asked for: a company's domains (of one status, or any), newest first. */
export interface DomainPageCall {
  companyId: number;
  status: DomainStatus | undefined;
  limit: number;
  offset: number;
}

/** The page's domains (without their company) and how many the company has with that status. */
export interface DomainPageRead {
  domains: Domain[];
  total: number;
}

/** The order of a page: newest first, the id breaking ties. */
const NEWEST_FIRST = 'ORDER BY d.created_at DESC, d.id DESC';

/**
 * A company's domains, a page at a time: the customer's `GET /api/v1/domains`, which an API key
 * may call as often as its rate limit lets it.
 *
 * On PostgreSQL the pages asked for at the same moment share one statement (the runtime's batchedQuery): one
 * row of parameters per call (`unnest`), each with its count and its page (`LATERAL`), so fifty
 * concurrent requests make one round trip instead of fifty, or a hundred when their pages are
 * empty (a statement per page, and a count after an empty one). Profiled under the bench's load
 * (quality.md, an API key on a read route), the pg client's socket writes alone were a fifth of
 * the service's CPU on this route; batched, the route went from 0.2 to over 0.3 of the
 * /health/live ceiling. The pages' rows come back as the columns TypeORM reads, converted by the
 * same EntityRowReader as on SQLite. On SQLite, which answers in-process, each call reads its
 * page at once: one statement gives the page and the total, and a second one counts only when
 * the page is past the end.
 */
export class CompanyDomainPages {
  private readonly row: EntityRowReader<Domain>;
  /** The page asked for. */
  readonly read: (call: DomainPageCall) => Promise<DomainPageRead>;

  constructor(dataSource: DataSource, runtime: DatabaseRuntime) {
    this.row = new EntityRowReader(dataSource, Domain, 'd');
    const columns = this.row.selectList();
    // PostgreSQL, per call (n, from 1): n, the total, the domain's id (NULL for a page past the end), its columns.
    const pages = runtime.read(
      'domains_of_companies',
      `SELECT k.n, t.total, d.id, ${columns} ` +
        'FROM unnest(?::int[], ?::text[], ?::int[], ?::int[]) WITH ORDINALITY AS k(company_id, status, lim, off, n) ' +
        'CROSS JOIN LATERAL (SELECT COUNT(*) AS total FROM domains c ' +
        'WHERE c.company_id = k.company_id AND (k.status IS NULL OR c.status = k.status)) t ' +
        `LEFT JOIN LATERAL (SELECT ${columns} FROM domains d ` +
        'WHERE d.company_id = k.company_id AND (k.status IS NULL OR d.status = k.status) ' +
        `${NEWEST_FIRST} LIMIT k.lim OFFSET k.off) d ON true ` +
        'ORDER BY k.n, d.created_at DESC, d.id DESC',
    );
    // SQLite: one call's page with the total; the count alone when the page is past the end.
    const page = (name: string, where: string) =>
      runtime.read(
        name,
        `SELECT ${columns}, COUNT(*) OVER () FROM domains d WHERE ${where} ${NEWEST_FIRST} LIMIT ? OFFSET ?`,
      );
    const count = (name: string, where: string) =>
      runtime.read(name, `SELECT COUNT(*) FROM domains d WHERE ${where}`);
    const alone = {
      all: {
        page: page('domains_of_company', 'd.company_id = ?'),
        count: count('domains_of_company_count', 'd.company_id = ?'),
      },
      byStatus: {
        page: page('domains_of_company_by_status', 'd.company_id = ? AND d.status = ?'),
        count: count('domains_of_company_by_status_count', 'd.company_id = ? AND d.status = ?'),
      },
    };
    this.read = runtime.batchedQuery<DomainPageCall, DomainPageRead>({
      many: async (calls) => this.readPages(calls.length, await pages.all(arraysOf(calls))),
      each: async ({ companyId, status, limit, offset }) => {
        const read = status ? alone.byStatus : alone.all;
        const filter = status ? [companyId, status] : [companyId];
        const rows = await read.page.all([...filter, limit, offset]);
        const domains = rows.map((row) => this.row.read(row));
        if (rows.length > 0) return { domains, total: Number(rows[0][this.row.width]) };
        const counted = await read.count.all(filter);
        return { domains, total: Number(counted[0][0]) };
      },
    });
  }

  /** PostgreSQL: the rows of one batch statement, back to each call's page in the calls' order. */
  private readPages(calls: number, rows: readonly ReadRow[]): DomainPageRead[] {
    const pages = Array.from({ length: calls }, (): DomainPageRead => ({ domains: [], total: 0 }));
    for (const row of rows) {
      const page = pages[Number(row[0]) - 1];
      page.total = Number(row[1]);
      if (row[2] !== null) page.domains.push(this.row.read(row, 3));
    }
    return pages;
  }
}

/** The calls' parameters as the four arrays the batch statement unnests. */
function arraysOf(calls: readonly DomainPageCall[]): unknown[] {
  return [
    calls.map((c) => c.companyId),
    calls.map((c) => c.status ?? null),
    calls.map((c) => c.limit),
    calls.map((c) => c.offset),
  ];
}
