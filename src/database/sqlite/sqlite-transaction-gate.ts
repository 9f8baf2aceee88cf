import { AsyncLocalStorage } from 'node:async_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { DataSource, QueryRunner } from 'typeorm';
import { eventLoopSlice, LoopSlice } from '../../common/runtime/loop-slice';

/**
 * Keeps SQLite transactions to themselves. TypeORM gives SQLite one connection, shared by every
 * request; without this, a statement of request B issued while request A's transaction is open
 * runs inside A's transaction: B's write is lost if A rolls back, and B reads what A has not
 * committed. PostgreSQL does not need it: each transaction has its own pooled connection.
 *
 * A transaction runs in an async scope of its own (AsyncLocalStorage). While one is open, a
 * statement from outside that scope waits until it ends; a transaction starts only once no
 * statement from outside is half-way through TypeORM's query path. Statements inside the scope
 * (through the transaction's manager or not) pass, and a transaction begun inside one nests
 * (TypeORM uses a savepoint). Outside a transaction nothing waits for the gate.
 *
 * better-sqlite3 answers synchronously, and awaiting its settled results yields only to
 * microtasks: a log batch of a thousand lines ran as one block of several hundred milliseconds,
 * and the 40 statements that waited for a commit ran as another. So every statement, inside a
 * transaction or not, first takes its place in the event loop's slice (LoopSlice): once the
 * work of this turn has run its slice, the statement waits for the next turn. Outside statements
 * still wait for the commit (they must not read what it has not committed).
 *
 * `dataSource.transaction()` and `manager.transaction()` (and so TransactionService) open a
 * scope. TypeORM's own per-save() transactions cannot be told apart from the statements of
 * other requests, so they run as single autocommitted statements (each one atomic; no entity
 * here cascades), as does a transaction begun by hand on a query runner: work that must be
 * atomic goes through `transaction()`.
 */
export class SqliteTransactionGate {
  private readonly scope = new AsyncLocalStorage<symbol>();
  private owner: symbol | undefined;
  /** Transactions waiting to start: new outside statements wait behind them. */
  private waitingTransactions = 0;
  /** Outside statements between the gate and the end of their query. */
  private statementsInFlight = 0;
  private wakers: Array<() => void> = [];
  /** Outside save()s whose transaction was turned into autocommitted statements. */
  private skippedTransactions = 0;
  private readonly gated = new WeakSet<QueryRunner>();

  constructor(private readonly slice: LoopSlice = eventLoopSlice) {}

  /** Runs `work` as one transaction, after any other transaction and outside statement in flight. */
  async transaction<T>(work: () => Promise<T>): Promise<T> {
    if (this.insideTransaction()) return work();
    this.waitingTransactions++;
    try {
      while (this.owner !== undefined || this.statementsInFlight > 0) {
        await this.nextChange();
        // A turn of the event loop between one transaction and the next: queued transactions (40
        // log batches of one queue) would otherwise run back to back as one chain of microtasks.
        await nextTurn();
      }
    } finally {
      this.waitingTransactions--;
    }
    const token = Symbol('transaction');
    this.owner = token;
    try {
      return await this.scope.run(token, work);
    } finally {
      this.owner = undefined;
      this.wake();
    }
  }

  /** Statements and transactions waiting here right now (tests wait for them to have queued). */
  get waiting(): number {
    return this.wakers.length;
  }

  /** True when a statement made now would run inside another scope's open transaction. */
  mustWait(): boolean {
    return this.owner !== undefined && !this.insideTransaction();
  }

  /**
   * For a statement run synchronously on the driver the moment it is let in (a prepared read, a
   * change notice): resolves once no other scope's transaction is open. It does not queue behind
   * transactions waiting to start, as `admit` does: it cannot be caught half-way by one, and a
   * relay decision's read would otherwise wait for every queued log batch (40: ~550 ms).
   */
  async untilNoOpenTransaction(): Promise<void> {
    while (this.mustWait()) await this.nextChange();
  }

  /** Resolves once a statement from here may run (at once when none must wait). */
  async admit(): Promise<void> {
    while (this.mustWait() || (this.waitingTransactions > 0 && !this.insideTransaction())) {
      await this.nextChange();
    }
  }

  /** Puts the data source's transactions and its (shared, re-created on reconnect) query runner behind the gate. */
  install(dataSource: DataSource): void {
    const driver = dataSource.driver as unknown as { createQueryRunner(mode: string): QueryRunner };
    const createQueryRunner = driver.createQueryRunner.bind(driver);
    driver.createQueryRunner = (mode) => this.gate(createQueryRunner(mode));
    const manager = dataSource.manager;
    const transaction = manager.transaction.bind(manager) as (...args: unknown[]) => Promise<unknown>;
    manager.transaction = (...args: unknown[]) => this.transaction(() => transaction(...args));
  }

  /** Routes a query runner's statements and transactions through the gate. */
  gate(runner: QueryRunner): QueryRunner {
    if (this.gated.has(runner)) return runner;
    this.gated.add(runner);
    const query = runner.query.bind(runner) as (...args: unknown[]) => Promise<unknown>;
    const start = runner.startTransaction.bind(runner);
    const commit = runner.commitTransaction.bind(runner);
    const rollback = runner.rollbackTransaction.bind(runner);

    runner.query = (async (...args: unknown[]) => {
      if (this.insideTransaction()) {
        await this.slice.take();
        return query(...args);
      }
      await this.admitInSlice();
      this.statementsInFlight++;
      try {
        return await query(...args);
      } finally {
        this.statementsInFlight--;
        if (this.statementsInFlight === 0) this.wake();
      }
    }) as QueryRunner['query'];
    runner.startTransaction = async (isolationLevel) => {
      if (this.insideTransaction()) return start(isolationLevel);
      this.skippedTransactions++;
    };
    runner.commitTransaction = async () => {
      if (this.insideTransaction() || this.skippedTransactions === 0) return commit();
      this.skippedTransactions--;
    };
    runner.rollbackTransaction = async () => {
      if (this.insideTransaction() || this.skippedTransactions === 0) return rollback();
      this.skippedTransactions--;
    };
    return runner;
  }

  /** `admit`, in a turn whose slice is not spent (after a turn, a transaction may have begun: admitted again). */
  private async admitInSlice(): Promise<void> {
    for (;;) {
      await this.admit();
      if (this.slice.enter()) return;
      await nextTurn();
    }
  }

  private insideTransaction(): boolean {
    return this.owner !== undefined && this.scope.getStore() === this.owner;
  }

  private nextChange(): Promise<void> {
    return new Promise((resolve) => this.wakers.push(resolve));
  }

  private wake(): void {
    const wakers = this.wakers;
    this.wakers = [];
    for (const wake of wakers) wake();
  }
}
