import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

/**
 * Runs work in one database transaction. SQLite has a single connection, and TypeORM cannot
 * open a second transaction on it while one is running, so there transactions are queued
 * one after another; PostgreSQL runs them concurrently on pooled connections.
 */
@Injectable()
export class TransactionService {
  private readonly serial: boolean;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly dataSource: DataSource) {
    this.serial = dataSource.options.type !== 'postgres';
  }

  get isPostgres(): boolean {
    return !this.serial;
  }

  run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    if (!this.serial) return this.dataSource.transaction(work);
    const next = this.tail.then(() => this.dataSource.transaction(work));
    this.tail = next.catch(() => undefined);
    return next;
  }
}
