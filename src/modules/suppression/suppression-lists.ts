import { Injectable, Module } from '@nestjs/common';
import { chunks } from '../../database/chunks';
import { DatabaseRuntime, HotRead, KeyedRead } from '../../database/database-runtime';
import type { SuppressionReason } from './entities/suppression-entry.entity';

const UNEXPIRED = '(expires_at IS NULL OR expires_at > ?)';

/** A recipient of a company as a lookup key: the company id, a line break, the address. */
const keyOf = (companyId: number, email: string) => `${companyId}\n${email}`;

/** A suppressed key and the reason of the entry that suppresses it. */
type Hit = readonly [key: string, reason: SuppressionReason];

/**
 * The suppression lists as the relay decision reads them: which of a message's recipients are
 * on the company's list or the global one. Kept apart from SuppressionService so the Postfix
 * policy server can load it without the HTTP side of the area.
 *
 * Each list is read through its partial unique index. On PostgreSQL the recipients of
 * concurrent decisions, of any companies, share one statement (one index probe a key); on
 * SQLite a decision reads its own recipients as two statements, one per list (`company_id = ?
 * OR company_id IS NULL` makes SQLite merge two index searches, ~4× slower).
 */
@Injectable()
export class SuppressionLists {
  private readonly lookup: KeyedRead<Hit>;
  private readonly ownList: HotRead;
  private readonly globalList: HotRead;
  private readonly listsOfManyCompanies: HotRead;

  constructor(private readonly runtime: DatabaseRuntime) {
    // SQLite only (PostgreSQL reads both lists of many companies at once below). The index is
    // named: without planner statistics (a young embedded database) SQLite probed the global list
    // through the company index and a bloom filter, reading every global entry: ~360 µs a read
    // among 2,000 global entries against ~2 µs through its own unique index.
    const list = (name: string, index: string, where: string) =>
      runtime.read(
        name,
        `SELECT email, reason FROM suppression_entries INDEXED BY ${index} ` +
          `WHERE ${where} AND email {list} AND ${UNEXPIRED}`,
      );
    this.ownList = list('suppressed_own', 'uq_suppression_company_email', 'company_id = ?');
    this.globalList = list('suppressed_global', 'uq_suppression_global_email', 'company_id IS NULL');
    // PostgreSQL only, so numbered: $1 keys, $2 company ids, $3 addresses, $4 now. LATERAL … LIMIT 1
    // makes one index probe a key, where a join of the unnested keys to the table may be planned
    // as a scan of the whole list.
    const probe = (where: string) =>
      `CROSS JOIN LATERAL (SELECT reason FROM suppression_entries WHERE ${where} ` +
      'AND (expires_at IS NULL OR expires_at > $4) LIMIT 1) s';
    this.listsOfManyCompanies = runtime.read(
      'suppressed_among_many',
      `SELECT k.key, s.reason, 0 FROM unnest($1::text[], $2::int[], $3::text[]) AS k(key, company_id, email) ` +
        `${probe('company_id = k.company_id AND email = k.email')} UNION ALL ` +
        `SELECT k.key, s.reason, 1 FROM unnest($1::text[], $3::text[]) AS k(key, email) ` +
        `${probe('company_id IS NULL AND email = k.email')} ORDER BY 3`,
    );
    this.lookup = runtime.keyedRead<Hit>({
      many: (keys) => this.readMany(keys),
      each: (keys) => this.readOneCompany(keys),
    });
  }

  /**
   * The recipients (compared trimmed and lower-cased) that are suppressed for the company, in
   * the order given, each once, with the reason of the company's own entry, else the global one.
   * Expired entries do not count. Straight on the driver: this runs for every message the relay
   * accepts.
   */
  async suppressedAmong(
    companyId: number,
    recipients: readonly string[],
  ): Promise<Array<{ email: string; reason: SuppressionReason }>> {
    const emails = [...new Set(recipients.map((r) => r.trim().toLowerCase()).filter(Boolean))];
    const found: Array<{ email: string; reason: SuppressionReason }> = [];
    for (const chunk of chunks(emails)) {
      const hits = await this.lookup.load(chunk.map((email) => keyOf(companyId, email)));
      for (const email of chunk) {
        const hit = hits.get(keyOf(companyId, email));
        if (hit) found.push({ email, reason: hit[1] });
      }
    }
    return found;
  }

  /** The keys of one call (one company): each list through its own statement. */
  private async readOneCompany(keys: string[]): Promise<Hit[]> {
    const companyId = Number(keys[0].slice(0, keys[0].indexOf('\n')));
    const emails = keys.map((key) => key.slice(key.indexOf('\n') + 1));
    const at = this.runtime.sqlDate(new Date());
    const [own, global] = await Promise.all([
      this.ownList.all([companyId, emails, at]),
      this.globalList.all([emails, at]),
    ]);
    return hitsOf([...own, ...global].map(([email, reason]) => [keyOf(companyId, email as string), reason]));
  }

  /** The keys of concurrent calls (any companies) in one statement. */
  private async readMany(keys: string[]): Promise<Hit[]> {
    const companyIds = keys.map((key) => Number(key.slice(0, key.indexOf('\n'))));
    const emails = keys.map((key) => key.slice(key.indexOf('\n') + 1));
    const at = this.runtime.sqlDate(new Date());
    return hitsOf(await this.listsOfManyCompanies.all([keys, companyIds, emails, at]));
  }
}

/** One hit per key, the first row's: the company's own entry comes before the global one. */
function hitsOf(rows: ReadonlyArray<readonly unknown[]>): Hit[] {
  const hits = new Map<string, Hit>();
  for (const [key, reason] of rows) {
    if (!hits.has(key as string)) hits.set(key as string, [key as string, reason as SuppressionReason]);
  }
  return [...hits.values()];
}

/** SuppressionLists alone; SuppressionModule imports and re-exports it. */
@Module({
  providers: [SuppressionLists],
  exports: [SuppressionLists],
})
export class SuppressionListsModule {}
