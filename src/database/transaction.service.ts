import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { SqliteTransactionGate } from './sqlite-transaction-gate';

/**
 * Runs work in one database transaction. PostgreSQL runs transactions concurrently on pooled
 * connections. SQLite has a single connection, shared by every request: there the gate runs
 * one transaction at a time and keeps other requests' statements out of it (see
 * SqliteTransactionGate).
 */
@Injectable()
export class TransactionService {
  /** Present on SQLite only. */
  readonly sqliteGate?: SqliteTransactionGate;

  constructor(private readonly dataSource: DataSource) {
    if (dataSource.options.type === 'postgres') return;
    this.sqliteGate = new SqliteTransactionGate();
    this.sqliteGate.install(dataSource);
  }

  get isPostgres(): boolean {
    return !this.sqliteGate;
  }

  run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }
}
