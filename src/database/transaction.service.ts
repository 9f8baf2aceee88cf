import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomInt } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { Permits } from '../common/async/permits';
import { DatabaseRuntime } from './database-runtime';

/** Work for after the commit: an e-mail, a call to another system. Sync or async. */
export type AfterCommit = () => unknown;

/** What the work of a transaction may do beside its statements. */
export interface TransactionScope {
  /**
   * Runs `fn` once the transaction has committed (in the order registered), never if it rolls
   * back. A failure of `fn` is logged, not thrown: the committed change stands.
   */
  afterCommit(fn: AfterCommit): void;
}

/** Work for the end of a transaction, inside it (see TransactionService.beforeCommit). */
export type BeforeCommit = () => Promise<unknown>;

/** Row-locking transactions at once on PostgreSQL: a few, well under the pool's 20 connections. */
const ROW_LOCKING_PERMITS = 4;
/**
 * This process's first counter shard (see counterShard): replicas on one database pick theirs at
 * random among 16, so two replicas' transactions rarely share a shard either.
 */
const PROCESS_SHARDS = randomInt(0, 16) * (ROW_LOCKING_PERMITS + 1);

interface OpenTransaction {
  /** See TransactionService.counterShard. */
  shard: number;
  callbacks: AfterCommit[];
  /** Writes deferred to the end of the work (beforeCommit), in the order registered. */
  finishing: BeforeCommit[];
  state: 'open' | 'committed' | 'rolled_back';
}

/**
 * Runs work in one database transaction. PostgreSQL runs transactions concurrently on pooled
 * connections. SQLite has a single connection, shared by every request: there the gate runs
 * one transaction at a time and keeps other requests' statements out of it (see
 * SqliteTransactionGate).
 *
 * Side effects that must not outlive a rollback (e-mail above all) are registered with
 * `afterCommit`, through the scope handed to the work or through the transaction's manager.
 * A transaction begun inside another (`run` within `run`) is a savepoint on SQLite: its
 * callbacks join the outer transaction's. On PostgreSQL it has a connection of its own and
 * commits by itself, so its callbacks run at its own commit.
 */
@Injectable()
export class TransactionService implements BeforeApplicationShutdown {
  private readonly logger = new Logger(TransactionService.name);
  /** The transaction each manager handed out by `run` belongs to. */
  private readonly byManager = new WeakMap<EntityManager, OpenTransaction>();
  /** The transaction whose work is running, to recognise a nested `run`. */
  private readonly current = new AsyncLocalStorage<OpenTransaction>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly runtime: DatabaseRuntime,
  ) {}

  private readonly rowLocking = new Permits(ROW_LOCKING_PERMITS);
  /** The row-locking permits' slots not taken: each running transaction has its own (counterShard). */
  private readonly freeSlots = Array.from({ length: ROW_LOCKING_PERMITS }, (_, n) => n);
  /** After-commit work that nobody awaits (see `detach`), until it settles. */
  private readonly detached = new Set<Promise<void>>();

  /** See DatabaseRuntime.bulkUnit: the pieces of bulk work one transaction holds at most. */
  get bulkUnit(): number {
    return this.runtime.bulkUnit;
  }

  private get isPostgres(): boolean {
    return this.runtime.isPostgres;
  }

  /**
   * `run`, for transactions that wait on hot row locks (log batches and mail-provider events lock
   * queue rows): on PostgreSQL at most ROW_LOCKING_PERMITS of them run at once, the others wait in
   * memory holding no connection. Unbounded, 40 batches of one queue took the pool of 20 waiting
   * on its row lock, and the relay decision and half the batches timed out for a connection (503).
   * SQLite runs one transaction at a time anyway (SqliteTransactionGate).
   */
  runRowLocking<T>(work: (manager: EntityManager, scope: TransactionScope) => Promise<T>): Promise<T> {
    if (!this.isPostgres) return this.run(work);
    return this.rowLocking.run(async () => {
      const slot = this.freeSlots.pop()!;
      try {
        return await this.run(work, PROCESS_SHARDS + 1 + slot);
      } finally {
        this.freeSlots.push(slot);
      }
    });
  }

  /**
   * The shard of counter rows that `manager`'s transaction adds to (a roll-up's cells keyed by
   * shard, summed when read): no two row-locking transactions of this process at once have the same
   * one, so concurrent log batches never wait for each other's roll-up rows. 0 on SQLite, where
   * transactions run one at a time, and outside any transaction.
   */
  counterShard(manager: EntityManager | undefined): number {
    return (manager && this.byManager.get(manager)?.shard) ?? 0;
  }

  /**
   * Runs `work` in a transaction; when it has committed, runs the callbacks registered with
   * `afterCommit` before resolving. A rollback drops them and rethrows the error.
   */
  async run<T>(
    work: (manager: EntityManager, scope: TransactionScope) => Promise<T>,
    shard = this.isPostgres ? PROCESS_SHARDS : 0,
  ): Promise<T> {
    const outer = this.current.getStore();
    const tx: OpenTransaction = { shard, callbacks: [], finishing: [], state: 'open' };
    const scope: TransactionScope = { afterCommit: (fn) => this.register(tx, fn) };
    let result: T;
    try {
      result = await this.current.run(tx, () =>
        this.runtime.transaction(() =>
          this.dataSource.transaction(async (manager) => {
            // SQLite hands every transaction, nested ones included, the one shared runner's manager.
            const enclosing = this.byManager.get(manager);
            this.byManager.set(manager, tx);
            try {
              const done = await work(manager, scope);
              // Registered work may register more: all of it runs before the commit.
              for (let next = tx.finishing.shift(); next; next = tx.finishing.shift()) await next();
              return done;
            } finally {
              if (enclosing?.state === 'open') this.byManager.set(manager, enclosing);
            }
          }),
        ),
      );
    } catch (e) {
      tx.state = 'rolled_back';
      tx.callbacks = [];
      throw e;
    }
    tx.state = 'committed';
    const callbacks = tx.callbacks;
    tx.callbacks = [];
    if (outer && !this.isPostgres) {
      // A savepoint: nothing is committed until the outer transaction is.
      for (const fn of callbacks) this.register(outer, fn);
      return result;
    }
    for (const fn of callbacks) await this.invoke(fn);
    return result;
  }

  /**
   * Runs `fn` after the commit of the transaction `manager` belongs to (see TransactionScope).
   * Without a manager, or with one outside any transaction, `fn` runs now. A manager of a
   * transaction not begun by `run` is refused: there would be no commit to wait for.
   */
  afterCommit(manager: EntityManager | undefined, fn: AfterCommit): void {
    const tx = manager && this.byManager.get(manager);
    if (tx) return this.register(tx, fn);
    if (manager?.queryRunner?.isTransactionActive) {
      throw new Error(
        'afterCommit: this manager belongs to a transaction not begun by TransactionService.run',
      );
    }
    this.detach(fn);
  }

  /**
   * Runs `fn` inside the transaction of `manager` once its work has returned, just before the
   * commit (in the order registered; a failure rolls the transaction back). For writes to rows
   * that many transactions update (counters, roll-up cells): a row lock is held from the write to
   * the commit, so the later the write, the less the others wait for it. Without a manager, or
   * with one outside any transaction, `fn` runs now.
   */
  async beforeCommit(manager: EntityManager | undefined, fn: BeforeCommit): Promise<void> {
    const tx = manager && this.byManager.get(manager);
    if (tx?.state === 'open') {
      tx.finishing.push(fn);
      return;
    }
    await fn();
  }

  /**
   * Starts `fn` and does not wait for it: after-commit work that must not hold up its caller
   * (e-mail to many recipients after the response). Like every after-commit callback, its
   * failure is logged, not thrown. `settled()` waits for it.
   */
  detach(fn: AfterCommit): void {
    const running = this.invoke(fn).finally(() => this.detached.delete(running));
    this.detached.add(running);
  }

  /**
   * Resolves once all after-commit work not awaited by anyone (`detach`, `afterCommit` outside a
   * transaction or after its commit) has settled, including what that work detached in turn.
   * For shutdown, and for tests, which assert that no e-mail came only once none is on its way.
   */
  async settled(): Promise<void> {
    while (this.detached.size) await Promise.all(this.detached);
  }

  /** Detached work (e-mail above all) finishes before the mail transport and the database close. */
  beforeApplicationShutdown(): Promise<void> {
    return this.settled();
  }

  private register(tx: OpenTransaction, fn: AfterCommit): void {
    switch (tx.state) {
      case 'open':
        tx.callbacks.push(fn);
        return;
      case 'committed':
        this.detach(fn);
        return;
      case 'rolled_back':
        return;
    }
  }

  private async invoke(fn: AfterCommit): Promise<void> {
    try {
      await fn();
    } catch (e: unknown) {
      this.logger.error({ err: e }, 'After-commit work failed');
    }
  }
}
