import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** How often the shared connection's planner statistics are brought up to date. */
export const STATISTICS_EVERY_MS = 10_000;
/**
 * `PRAGMA optimize` with every table checked (0x10000), not only those this connection's queries
 * used since the last run; ANALYZE where one has grown or shrunk a lot (0x02), each with the
 * pragma's temporary analysis limit (0x10: without it, a million-row table took 1–2 s).
 */
const OPTIMIZE = 'PRAGMA optimize=0x10012';

/**
 * Keeps the embedded database's planner statistics (`sqlite_stat1`) in step with its tables, as
 * SQLite recommends for a long-lived connection: `PRAGMA optimize` when the service starts and
 * every STATISTICS_EVERY_MS after, on the connection the service queries (statistics an ANALYZE
 * wrote from another connection reach this one's planner only when it reloads its schema).
 *
 * Why it matters here: the planner takes a table's size from the statistics, not from the table.
 * Analysed while small (a young relay, or an operator's ANALYZE), a table that then grows keeps
 * its small size in the planner's eyes, and a lookup of a few hundred keys (`IN (…)` on an
 * indexed column, the shape of every bulk read and write) becomes a scan of the whole table:
 * measured on the bench's provider events, statistics of 300 rows on a table of thousands, 48 ms a
 * statement instead of 1. `optimize` re-analyses a table once its size has moved well away from
 * what its statistics say; nothing when it has not. PostgreSQL's autovacuum does this there.
 * Started and stopped by SqliteRuntime.
 */
export class SqliteStatistics {
  private readonly logger = new Logger(SqliteStatistics.name);
  private timer?: NodeJS.Timeout;
  private failing = false;

  constructor(private readonly dataSource: DataSource) {}

  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), STATISTICS_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * Re-analyses the tables whose statistics no longer describe them. Through TypeORM like any
   * outside statement, so it waits for an open transaction (SqliteTransactionGate).
   */
  async refresh(): Promise<void> {
    try {
      await this.dataSource.query(OPTIMIZE);
      this.failing = false;
    } catch (error: unknown) {
      if (!this.failing)
        this.logger.warn({ err: error }, 'Planner statistics could not be refreshed; will retry');
      this.failing = true;
    }
  }
}
