import { Injectable } from '@nestjs/common';
import { Gauge, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { METRICS_REGISTRY, startProcessMetrics } from './metrics';

/** The tables of the inbound-event inbox (src/database/inbound-events.ts), each indexed on `outcome`. */
export const INBOUND_SOURCES = ['payment_events', 'log_batches', 'provider_events'] as const;

/** pg's pool as TypeORM's PostgresDriver keeps it (`driver.master`, held by driver-internals.spec.ts). */
interface PgPoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/**
 * The exposition of `/metrics` for one application: the process's counters (metrics.ts) and what
 * is read from this application's database when scraped, never on a request's path:
 *
 * - `inbound_events_unapplied{source}`: events stored but not applied (outcome IS NULL: a failed
 *   apply, waiting for the retry job). Three counts on indexes that hold `outcome`. Every process
 *   on the database reports the same number: aggregate with max, never sum.
 * - `db_pool_connections_in_use`, `db_pool_waiting_requests`: pg's pool (0 on SQLite, which has
 *   no pool: one in-process connection).
 */
@Injectable()
export class MetricsService {
  private readonly registry = new Registry();

  constructor(private readonly dataSource: DataSource) {
    startProcessMetrics();
    const registers = [this.registry];
    const pool = () => (this.dataSource.driver as unknown as { master?: Partial<PgPoolCounts> }).master;
    new Gauge({
      name: 'inbound_events_unapplied',
      help: 'Inbound events stored but not applied (outcome IS NULL), by table; the same from every process: use max',
      labelNames: ['source'] as const,
      registers,
      collect: async function () {
        const counts = await countUnapplied(dataSource);
        for (const source of INBOUND_SOURCES) this.set({ source }, counts[source]);
      },
    });
    new Gauge({
      name: 'db_pool_connections_in_use',
      help: 'Database pool connections checked out (PostgreSQL; 0 on SQLite)',
      registers,
      collect() {
        const p = pool();
        this.set(p?.totalCount !== undefined ? p.totalCount - (p.idleCount ?? 0) : 0);
      },
    });
    new Gauge({
      name: 'db_pool_waiting_requests',
      help: 'Queries waiting for a database pool connection (PostgreSQL; 0 on SQLite)',
      registers,
      collect() {
        this.set(pool()?.waitingCount ?? 0);
      },
    });
  }

  /** The `Content-Type` of the exposition (Prometheus text format 0.0.4). */
  get contentType(): string {
    return METRICS_REGISTRY.contentType;
  }

  /** The text exposition: the process's series, then this application's. */
  async exposition(): Promise<string> {
    const [process, application] = await Promise.all([METRICS_REGISTRY.metrics(), this.registry.metrics()]);
    return `${process}\n${application}`;
  }
}

/** One statement, three index lookups: `outcome` is indexed on each table (the retry job reads them the same way). */
async function countUnapplied(
  dataSource: DataSource,
): Promise<Record<(typeof INBOUND_SOURCES)[number], number>> {
  if (!dataSource.isInitialized) return { payment_events: 0, log_batches: 0, provider_events: 0 };
  const columns = INBOUND_SOURCES.map((t) => `(SELECT COUNT(*) FROM ${t} WHERE outcome IS NULL) AS ${t}`);
  const [row]: Array<Record<string, string | number>> = await dataSource.query(
    `SELECT ${columns.join(', ')}`,
  );
  return {
    payment_events: Number(row.payment_events),
    log_batches: Number(row.log_batches),
    provider_events: Number(row.provider_events),
  };
}
