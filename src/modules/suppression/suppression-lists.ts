import { Injectable, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PreparedRead, sqlDate } from '../../database/prepared-read';
import { TransactionService } from '../../database/transaction.service';
import type { SuppressionReason } from './entities/suppression-entry.entity';

/** At most this many addresses are looked up in one statement (well under SQLite's bound parameters). */
const LOOKUP_CHUNK = 512;

const COLUMNS = 'SELECT email, reason FROM suppression_entries WHERE ';
const UNEXPIRED = ' AND (expires_at IS NULL OR expires_at > ?)';

/** The two lookups of one list size: the company's own list, and the global one. */
interface ListReads {
  own: PreparedRead;
  global: PreparedRead;
}

/**
 * The suppression lists as the relay decision reads them: which of a message's recipients are
 * on the company's list or the global one. Kept apart from SuppressionService so the Postfix
 * policy server can load it without the HTTP side of the area.
 */
@Injectable()
export class SuppressionLists {
  /** SQLite, by IN-list size (a power of two, the list padded). */
  private readonly reads = new Map<number, ListReads>();
  private union?: PreparedRead;

  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: TransactionService,
  ) {}

  /**
   * The recipients (compared trimmed and lower-cased) that are suppressed for the company, in
   * the order given, each once, with the reason of the company's own entry, else the global one.
   * Expired entries do not count.
   *
   * Each list is read through its partial unique index: on SQLite as two statements (`company_id
   * = ? OR company_id IS NULL` makes it merge two index searches, ~6× slower, and a UNION measured
   * slower still), on PostgreSQL as one UNION ALL (one round trip). Straight on the driver: this
   * runs for every message the relay accepts.
   */
  async suppressedAmong(
    companyId: number,
    recipients: readonly string[],
    now: Date = new Date(),
  ): Promise<Array<{ email: string; reason: SuppressionReason }>> {
    const emails = [...new Set(recipients.map((r) => r.trim().toLowerCase()).filter(Boolean))];
    if (!emails.length) return [];
    const own = new Map<string, SuppressionReason>();
    const global = new Map<string, SuppressionReason>();
    const at = sqlDate(now, this.transactions);
    for (let i = 0; i < emails.length; i += LOOKUP_CHUNK) {
      const chunk = emails.slice(i, i + LOOKUP_CHUNK);
      if (this.transactions.isPostgres) {
        // One round trip: PostgreSQL plans each half of the UNION on its own partial index.
        const rows = await this.bothLists().all([companyId, chunk, at, chunk, at]);
        for (const [email, reason, isOwn] of rows) {
          (isOwn ? own : global).set(email as string, reason as SuppressionReason);
        }
        continue;
      }
      const reads = this.readsFor(chunk.length);
      const list = padded(chunk);
      const ownRows = await reads.own.all([companyId, ...list, at]);
      const globalRows = await reads.global.all([...list, at]);
      for (const [email, reason] of ownRows) own.set(email as string, reason as SuppressionReason);
      for (const [email, reason] of globalRows) global.set(email as string, reason as SuppressionReason);
    }
    return emails.flatMap((email) => {
      const reason = own.get(email) ?? global.get(email);
      return reason ? [{ email, reason }] : [];
    });
  }

  /** PostgreSQL: both lists in one statement, the recipients as one array parameter. */
  private bothLists(): PreparedRead {
    return (this.union ??= new PreparedRead(
      this.dataSource,
      this.transactions,
      'suppressed_among',
      `SELECT email, reason, true FROM suppression_entries WHERE company_id = ? AND email = ANY(?)${UNEXPIRED} ` +
        `UNION ALL SELECT email, reason, false FROM suppression_entries WHERE company_id IS NULL AND email = ANY(?)${UNEXPIRED}`,
    ));
  }

  /** SQLite: the two lists' statements for an IN list of `count` (padded to a power of two). */
  private readsFor(count: number): ListReads {
    const size = paddedSize(count);
    let reads = this.reads.get(size);
    if (!reads) {
      const list = `email IN (${Array(size).fill('?').join(', ')})`;
      const read = (name: string, where: string) =>
        new PreparedRead(this.dataSource, this.transactions, `${name}_${size}`, COLUMNS + where + UNEXPIRED);
      reads = {
        own: read('suppressed_own', `company_id = ? AND ${list}`),
        global: read('suppressed_global', `company_id IS NULL AND ${list}`),
      };
      this.reads.set(size, reads);
    }
    return reads;
  }
}

/** The next power of two: a handful of prepared statements serve every list length. */
function paddedSize(count: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(1, count)));
}

/** The list repeated up to its padded size (a repeated value changes nothing in an IN list). */
function padded(list: string[]): string[] {
  const out = list.slice();
  while (out.length < paddedSize(list.length)) out.push(list[list.length - 1]);
  return out;
}

/** SuppressionLists alone; SuppressionModule imports and re-exports it. */
@Module({
  providers: [SuppressionLists],
  exports: [SuppressionLists],
})
export class SuppressionListsModule {}
