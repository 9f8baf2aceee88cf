import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource, EntitySubscriberInterface, TransactionCommitEvent } from 'typeorm';
import type { BeforeQueryEvent } from 'typeorm/subscriber/event/QueryEvent';

/** What waits at the gate, in the order it came: a transaction to begin, or an outside statement. */
interface Waiting {
  kind: 'transaction' | 'statement';
  go: () => void;
}

/** The owner of a transaction TypeORM began by itself (a `save()` outside TransactionService.run). */
const UNSCOPED = Symbol('TypeORM’s own transaction');

/**
 * Keeps SQLite transactions to themselves. TypeORM gives SQLite one connection, shared by every
 * request; without this, a statement of request B issued while request A's transaction is open
 * runs inside A's transaction: B's write is lost if A rolls back, and B reads what A has not
 * committed. PostgreSQL does not need it: each transaction has its own pooled connection.
 *
 * One plain FIFO of transactions and outside statements. A transaction (`transaction(work)`, which
 * TransactionService.run goes through) runs in an async scope of its own (AsyncLocalStorage) and
 * begins once nothing is open or in flight and everything queued before it has gone; while it is
 * open, statements from outside its scope wait, in the order they came, with the transactions
 * queued behind it. Statements inside the scope pass, and a transaction begun inside one nests
 * (TypeORM uses a savepoint). Outside a transaction nothing waits. A transaction runs whole,
 * never paused; between two transactions the event loop turns, so bulk work, which comes in short
 * transactions (DatabaseRuntime.bulkUnit), lets other requests in between its units.
 *
 * Only TypeORM's public API: the gate is a subscriber of the data source (`beforeQuery`, whose
 * promise TypeORM awaits before the statement, `afterQuery`, and the transaction events). A
 * transaction TypeORM begins by itself outside any scope (a repository's `save()` of several
 * rows) cannot be told apart from other requests' statements: it begins at once when nothing is
 * open and holds the transactions queued behind it until it ends. Work that must be atomic goes
 * through TransactionService.run, and ESLint refuses a transaction begun by hand.
 */
export class SqliteTransactionGate implements EntitySubscriberInterface {
  private readonly scope = new AsyncLocalStorage<symbol>();
  private owner: symbol | undefined;
  private readonly queue: Waiting[] = [];
  /** Outside statements let in whose query has not ended yet. */
  private statementsInFlight = 0;
  /** A transaction has ended in this turn of the event loop: the next begins in a later one (see `ended`). */
  private handingOver = false;
  /** Reads waiting for the open transaction to end and nothing more (see `whenNoOpenTransaction`). */
  private openEnded: Array<() => void> = [];

  /** Makes the gate one of the data source's subscribers. */
  install(dataSource: DataSource): void {
    dataSource.subscribers.push(this);
  }

  /** Runs `work` as one transaction, after the transactions and outside statements queued before it. */
  async transaction<T>(work: () => Promise<T>): Promise<T> {
    if (this.insideTransaction()) return work();
    const token = Symbol('transaction');
    if (this.isFree()) this.owner = token;
    else await this.wait('transaction', () => (this.owner = token));
    try {
      return await this.scope.run(token, work);
    } finally {
      this.ended();
    }
  }

  /** Statements and transactions waiting here right now (tests wait for them to have queued). */
  get waiting(): number {
    return this.queue.length + this.openEnded.length;
  }

  /** True when a statement made now would run inside another scope's open transaction. */
  mustWait(): boolean {
    return this.owner !== undefined && !this.insideTransaction();
  }

  /**
   * Runs `read`, a statement made synchronously on the driver (a hot read, a change notice), now
   * or the moment the open transaction of another scope ends, before the next one begins. It does
   * not queue behind the transactions waiting to begin, as an outside statement through TypeORM
   * does: it cannot be caught half-way by one, and a relay decision's read would otherwise wait
   * for every queued log batch.
   */
  whenNoOpenTransaction<T>(read: () => T): Promise<T> {
    // Now, in this same step: a transaction that began in between would hand the read its snapshot.
    if (!this.mustWait()) return settle(read);
    return new Promise((resolve, reject) =>
      this.openEnded.push(() => void settle(read).then(resolve, reject)),
    );
  }

  /** TypeORM: before every statement through the query runner; a promise returned is awaited. */
  beforeQuery(_event: BeforeQueryEvent): Promise<void> | void {
    if (this.insideTransaction()) return;
    if (this.owner === UNSCOPED || (this.owner === undefined && this.queue.length === 0)) {
      this.statementsInFlight++;
      return;
    }
    return this.wait('statement', () => this.statementsInFlight++);
  }

  /** TypeORM: after every statement (failed or not) through the query runner. */
  afterQuery(): void {
    if (this.insideTransaction() || this.statementsInFlight === 0) return;
    if (--this.statementsInFlight === 0) this.next();
  }

  /**
   * TypeORM: a transaction begins. One begun outside any scope (TypeORM's own, around a `save()`)
   * owns the connection at once until it ends: TypeORM has marked the shared runner's
   * transaction active already, so it cannot wait for its turn.
   */
  beforeTransactionStart(): void {
    if (this.owner === undefined && !this.insideTransaction()) this.owner = UNSCOPED;
  }

  afterTransactionCommit(event: TransactionCommitEvent): void {
    this.unscopedEnded(event);
  }

  afterTransactionRollback(event: TransactionCommitEvent): void {
    this.unscopedEnded(event);
  }

  private unscopedEnded(event: TransactionCommitEvent): void {
    if (this.owner === UNSCOPED && !event.queryRunner.isTransactionActive) this.ended();
  }

  /**
   * The open transaction has ended: the reads waiting for that alone, and the outside statements
   * next in line, go now; the next transaction begins in a later turn of the event loop.
   * better-sqlite3 answers synchronously, so a transaction begun in the same chain of microtasks
   * as the one before it would run in the same block of the event loop: 40 queued log batches
   * ran as one block (300–380 ms measured), and so would the units of one large batch
   * (InboundEventInbox.receiveInUnits), where each alone is a few tens of milliseconds.
   */
  private ended(): void {
    this.owner = undefined;
    for (const read of this.openEnded.splice(0)) read();
    if (!this.handingOver) {
      this.handingOver = true;
      setImmediate(() => {
        this.handingOver = false;
        this.next();
      });
    }
    this.next();
  }

  private isFree(): boolean {
    return (
      this.owner === undefined &&
      this.queue.length === 0 &&
      this.statementsInFlight === 0 &&
      !this.handingOver
    );
  }

  private wait(kind: Waiting['kind'], admitted: () => void): Promise<void> {
    return new Promise((resolve) =>
      this.queue.push({
        kind,
        go: () => {
          admitted();
          resolve();
        },
      }),
    );
  }

  /** Lets in what is next in line: the outside statements up to the next transaction, then that transaction once they have run and the turn has passed. */
  private next(): void {
    while (this.owner === undefined && this.queue[0]?.kind === 'statement') this.queue.shift()!.go();
    if (this.owner !== undefined || this.statementsInFlight > 0 || this.handingOver) return;
    this.queue.shift()?.go();
  }

  private insideTransaction(): boolean {
    return this.owner !== undefined && this.scope.getStore() === this.owner;
  }
}

/** `read()`'s answer or error as a promise, read at once. */
function settle<T>(read: () => T): Promise<T> {
  try {
    return Promise.resolve(read());
  } catch (e: unknown) {
    return Promise.reject(e instanceof Error ? e : new Error(String(e)));
  }
}
