import type { DataSource, EntitySubscriberInterface, TransactionStartEvent } from 'typeorm';

/**
 * Makes every SQLite transaction take the database's write lock as it begins, as `BEGIN
 * IMMEDIATE` would (TypeORM's SQLite runner can only say `BEGIN`, which takes no lock). A
 * transaction that reads before it writes asks for the write lock while it holds a read snapshot,
 * and SQLite then answers SQLITE_BUSY at once instead of waiting (`busy_timeout`), since waiting
 * could deadlock: when another connection held the lock (the checkpoint worker does while a
 * RESTART waits for readers, SqliteCheckpoints), such a transaction failed, and a log batch or a
 * webhook batch was answered 503. Asked for first, with no snapshot held, the lock is waited for
 * like any writer's. Within the service this costs no concurrency: its transactions run one at a
 * time on its one connection (SqliteTransactionGate).
 *
 * Only TypeORM's public API: a subscriber of the data source, whose `afterTransactionStart` TypeORM
 * awaits before the transaction's first statement. The lock is taken by a write that changes
 * nothing (`DELETE … WHERE 0` on the migrations table, which exists from the first migration on).
 */
export class SqliteWriteLock implements EntitySubscriberInterface {
  private takeLock = '';

  install(dataSource: DataSource): void {
    const table = dataSource.options.migrationsTableName ?? 'migrations';
    this.takeLock = `DELETE FROM ${dataSource.driver.escape(table)} WHERE 0`;
    dataSource.subscribers.push(this);
  }

  async afterTransactionStart(event: TransactionStartEvent): Promise<void> {
    try {
      await event.queryRunner.query(this.takeLock);
    } catch (e) {
      // A database without its migrations table yet (before the first migration) has no other writer either.
      if (!/no such table/.test(String((e as Error | undefined)?.message))) throw e;
    }
  }
}
