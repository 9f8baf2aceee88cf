import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Client, Notification } from 'pg';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';

/** How long a lost LISTEN connection waits before it connects again. */
const RECONNECT_MS = 1_000;

interface Notice {
  from: string;
  payload: unknown;
}

/**
 * Notices between the processes that share a PostgreSQL database (the API's replicas and the
 * Postfix policy server): `pg_notify` on a channel, heard by a connection of its own that
 * LISTENs, in every process that listens, a few milliseconds after the commit. An application
 * does not hear its own notices. With SQLite nothing is sent: what listens hears of other processes'
 * changes by the expiry of what it caches.
 */
@Injectable()
export class ChangeNotices implements OnApplicationShutdown {
  private readonly logger = new Logger(ChangeNotices.name);
  private readonly handlers = new Map<string, Set<(payload: unknown) => void>>();
  private client?: Client;
  private reconnect?: NodeJS.Timeout;
  private closed = false;
  /** This application, so that it can tell its own notices from the others'. */
  private readonly id = randomUUID();

  constructor(
    private readonly config: AppConfig,
    private readonly dataSource: DataSource,
  ) {}

  private get databaseUrl(): string | undefined {
    return this.config.env.DATABASE_URL || undefined;
  }

  /** Sends `payload` (JSON) to the other processes listening on `channel`. Failures are logged, never thrown. */
  publish(channel: string, payload: unknown): void {
    if (!this.databaseUrl || this.closed || !this.dataSource.isInitialized) return;
    const notice: Notice = { from: this.id, payload };
    this.dataSource
      .query('SELECT pg_notify($1, $2)', [channel, JSON.stringify(notice)])
      .catch((e: unknown) => this.logger.warn({ err: e, channel }, 'Change notice not sent'));
  }

  /**
   * Delivers the notices other processes committed since the last call, before a decision reads
   * what it cached. Nothing to do on PostgreSQL (LISTEN delivers them as they come).
   */
  catchUp(): void {}

  /** Calls `handler` with the payload of every notice another process sends on `channel`. */
  listen(channel: string, handler: (payload: unknown) => void): void {
    if (!this.databaseUrl) return;
    let handlers = this.handlers.get(channel);
    if (!handlers) {
      this.handlers.set(channel, (handlers = new Set()));
      if (this.client) void this.client.query(`LISTEN ${quoted(channel)}`).catch(() => undefined);
    }
    handlers.add(handler);
    if (!this.client && !this.reconnect) void this.connect();
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnect);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    this.reconnect = undefined;
    if (this.closed) return;
    const client = new Client({ connectionString: this.databaseUrl, connectionTimeoutMillis: 5_000 });
    client.on('notification', (n) => this.deliver(n));
    client.on('error', (e) => this.lost(client, e));
    this.client = client;
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN ${quoted(channel)}`);
    } catch (e: unknown) {
      this.lost(client, e);
    }
  }

  private lost(client: Client, error: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    void client.end().catch(() => undefined);
    if (this.closed) return;
    this.logger.warn({ err: error }, 'Change notices connection lost; connecting again');
    this.reconnect = setTimeout(() => void this.connect(), RECONNECT_MS);
    this.reconnect.unref();
  }

  private deliver({ channel, payload }: Notification): void {
    let notice: Notice;
    try {
      notice = JSON.parse(payload ?? '') as Notice;
    } catch {
      return;
    }
    if (notice.from === this.id) return;
    for (const handler of this.handlers.get(channel) ?? []) {
      try {
        handler(notice.payload);
      } catch (e: unknown) {
        this.logger.error({ err: e, channel }, 'Change notice handler failed');
      }
    }
  }
}

/** A channel name as an SQL identifier (LISTEN takes no parameter). */
function quoted(channel: string): string {
  return `"${channel.replace(/"/g, '""')}"`;
}
