import { Injectable, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PreparedReads, sqlDate } from '../../database/prepared-read';
import { TransactionService } from '../../database/transaction.service';
import type { SuppressionReason } from './entities/suppression-entry.entity';

/** At most this many addresses are looked up in one statement (well under SQLite's bound parameters). */
const LOOKUP_CHUNK = 512;

const UNEXPIRED = ' AND (expires_at IS NULL OR expires_at > ?)';

/**
 * The suppression lists as the relay decision reads them: which of a message's recipients are
 * on the company's list or the global one. Kept apart from SuppressionService so the Postfix
 * policy server can load it without the HTTP side of the area.
 */
@Injectable()
export class SuppressionLists {
  /**
   * The company's list and the global one, each through its partial unique index; `company_id =
   * ? OR company_id IS NULL` in one statement makes SQLite merge two index searches, ~4× slower.
   */
  private readonly lists: PreparedReads;

  constructor(
    dataSource: DataSource,
    private readonly transactions: TransactionService,
  ) {
    this.lists = new PreparedReads(dataSource, transactions, 'suppressed_among', [
      `SELECT email, reason FROM suppression_entries WHERE company_id = ? AND email {list}${UNEXPIRED}`,
      `SELECT email, reason FROM suppression_entries WHERE company_id IS NULL AND email {list}${UNEXPIRED}`,
    ]);
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
    now: Date = new Date(),
  ): Promise<Array<{ email: string; reason: SuppressionReason }>> {
    const emails = [...new Set(recipients.map((r) => r.trim().toLowerCase()).filter(Boolean))];
    if (!emails.length) return [];
    const own = new Map<string, SuppressionReason>();
    const global = new Map<string, SuppressionReason>();
    const at = sqlDate(now, this.transactions);
    for (let i = 0; i < emails.length; i += LOOKUP_CHUNK) {
      const chunk = emails.slice(i, i + LOOKUP_CHUNK);
      const [ownRows, globalRows] = await this.lists.all([
        [companyId, chunk, at],
        [chunk, at],
      ]);
      for (const [email, reason] of ownRows) own.set(email as string, reason as SuppressionReason);
      for (const [email, reason] of globalRows) global.set(email as string, reason as SuppressionReason);
    }
    return emails.flatMap((email) => {
      const reason = own.get(email) ?? global.get(email);
      return reason ? [{ email, reason }] : [];
    });
  }
}

/** SuppressionLists alone; SuppressionModule imports and re-exports it. */
@Module({
  providers: [SuppressionLists],
  exports: [SuppressionLists],
})
export class SuppressionListsModule {}
