import { Injectable, Module } from '@nestjs/common';
import { InjectRepository, TypeOrmModule } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { SuppressionEntry, SuppressionReason } from './entities/suppression-entry.entity';

/** At most this many addresses are looked up in one query (well under SQLite's bound parameters). */
const LOOKUP_CHUNK = 500;

/**
 * The suppression lists as the relay decision reads them: which of a message's recipients are
 * on the company's list or the global one. Kept apart from SuppressionService so the Postfix
 * policy server can load it without the HTTP side of the area.
 */
@Injectable()
export class SuppressionLists {
  constructor(@InjectRepository(SuppressionEntry) private readonly entries: Repository<SuppressionEntry>) {}

  /**
   * The recipients (compared trimmed and lower-cased) that are suppressed for the company, in
   * the order given, each once, with the reason of the company's own entry, else the global one.
   * Expired entries do not count. Served by the unique (company_id, email) indexes.
   */
  async suppressedAmong(
    companyId: number,
    recipients: readonly string[],
    now: Date = new Date(),
  ): Promise<Array<{ email: string; reason: SuppressionReason }>> {
    const emails = [...new Set(recipients.map((r) => r.trim().toLowerCase()).filter(Boolean))];
    if (!emails.length) return [];
    const reasons = new Map<string, { reason: SuppressionReason; own: boolean }>();
    const driver = this.entries.manager.connection.driver;
    for (let i = 0; i < emails.length; i += LOOKUP_CHUNK) {
      // Raw SQL through the driver's own parameter escaping: this runs for every message the
      // relay accepts, and the query builder costs more than the indexed lookup itself.
      const [sql, params] = driver.escapeQueryWithParameters(
        'SELECT email, reason, company_id FROM suppression_entries ' +
          'WHERE email IN (:...emails) AND (company_id = :companyId OR company_id IS NULL) ' +
          'AND (expires_at IS NULL OR expires_at > :now)',
        { emails: emails.slice(i, i + LOOKUP_CHUNK), companyId, now },
        {},
      );
      const rows: Array<{ email: string; reason: SuppressionReason; company_id: number | null }> =
        await this.entries.query(sql, params);
      for (const row of rows) {
        const own = row.company_id !== null;
        if (!reasons.get(row.email)?.own) reasons.set(row.email, { reason: row.reason, own });
      }
    }
    return emails.flatMap((email) => {
      const hit = reasons.get(email);
      return hit ? [{ email, reason: hit.reason }] : [];
    });
  }
}

/** SuppressionLists alone; SuppressionModule imports and re-exports it. */
@Module({
  imports: [TypeOrmModule.forFeature([SuppressionEntry])],
  providers: [SuppressionLists],
  exports: [SuppressionLists],
})
export class SuppressionListsModule {}
