import type { QueryRunner } from 'typeorm';
import { countTurns } from '../../../test/support/loop-turns';
import { LoopSlice } from '../../common/runtime/loop-slice';
import { SqliteTransactionGate } from './sqlite-transaction-gate';

/** A stand-in for TypeORM's shared SQLite runner that logs what reaches the connection. */
function fakeRunner(log: string[]): QueryRunner {
  return {
    query: (sql: string) => Promise.resolve(log.push(sql)),
    startTransaction: () => Promise.resolve(log.push('BEGIN')),
    commitTransaction: () => Promise.resolve(log.push('COMMIT')),
    rollbackTransaction: () => Promise.resolve(log.push('ROLLBACK')),
  } as unknown as QueryRunner;
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A transaction that runs `sql` and stays open until `release()`. */
function heldTransaction(gate: SqliteTransactionGate, runner: QueryRunner, sql: string) {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const done = gate.transaction(async () => {
    await runner.query(sql);
    await held;
  });
  return { done, release };
}

describe('SqliteTransactionGate', () => {
  it('holds outside statements until the open transaction ends', async () => {
    const log: string[] = [];
    const gate = new SqliteTransactionGate();
    const runner = gate.gate(fakeRunner(log));
    let release!: () => void;
    const transaction = gate.transaction(async () => {
      await runner.startTransaction();
      await runner.query('inside 1');
      await new Promise<void>((resolve) => (release = resolve));
      await runner.query('inside 2');
      await runner.commitTransaction();
    });
    await turn();
    const outside = runner.query('outside');
    await turn();
    expect(log).toEqual(['BEGIN', 'inside 1']);
    release();
    await Promise.all([transaction, outside]);
    expect(log).toEqual(['BEGIN', 'inside 1', 'inside 2', 'COMMIT', 'outside']);
  });

  it('lets the event loop turn during a long transaction of synchronous statements, outside statements still held', async () => {
    const log: string[] = [];
    // Each statement blocks 5 ms, as better-sqlite3 does (it answers synchronously).
    const blocking = fakeRunner(log);
    const query = blocking.query.bind(blocking);
    blocking.query = ((sql: string) => {
      const until = performance.now() + 5;
      while (performance.now() < until);
      return query(sql);
    }) as QueryRunner['query'];
    const gate = new SqliteTransactionGate();
    const runner = gate.gate(blocking);
    const seenByOthers: string[][] = [];
    let outside: Promise<unknown> | undefined;
    // Another request's work, scheduled before the transaction begins.
    setImmediate(() => {
      seenByOthers.push([...log]);
      outside = runner.query('outside');
    });
    await gate.transaction(async () => {
      await runner.startTransaction();
      for (let n = 0; n < 40; n++) await runner.query(`inside ${n}`);
      await runner.commitTransaction();
    });
    await outside;
    // The other work ran while the transaction was open; the outside statement after the commit.
    expect(seenByOthers).toHaveLength(1);
    expect(seenByOthers[0]).not.toContain('COMMIT');
    expect(seenByOthers[0].length).toBeGreaterThan(1);
    expect(log.slice(-2)).toEqual(['COMMIT', 'outside']);
  });

  it('lets the event loop turn between a transaction and the next one queued behind it', async () => {
    const log: string[] = [];
    const gate = new SqliteTransactionGate();
    const runner = gate.gate(fakeRunner(log));
    const { done: first, release } = heldTransaction(gate, runner, 'first');
    const second = gate.transaction(() => runner.query('second'));
    await turn();
    // Other work, due at the next turn once the first transaction has ended.
    release();
    setImmediate(() => log.push('other work'));
    await Promise.all([first, second]);
    expect(log).toEqual(['first', 'other work', 'second']);
  });

  it('runs the outside statements a commit releases in turns of their own once the slice is spent', async () => {
    const log: string[] = [];
    // A slice of 0 ms: after the first statement of a turn, the next waits for a later turn.
    const gate = new SqliteTransactionGate(new LoopSlice(0));
    const runner = gate.gate(fakeRunner(log));
    const turns = countTurns();
    const { done: transaction, release } = heldTransaction(gate, runner, 'inside');
    await turn();
    const ranIn: number[] = [];
    const outside = [1, 2, 3].map((n) => runner.query(`outside ${n}`).then(() => ranIn.push(turns.now)));
    await turn();
    release();
    await Promise.all([transaction, ...outside]);
    turns.stop();
    expect(log).toEqual(['inside', 'outside 1', 'outside 2', 'outside 3']);
    expect(new Set(ranIn).size).toBe(3);
  });

  it('lets a synchronous read in once the open transaction ends, ahead of the transactions queued behind it', async () => {
    const log: string[] = [];
    const gate = new SqliteTransactionGate();
    const runner = gate.gate(fakeRunner(log));
    const { done: first, release } = heldTransaction(gate, runner, 'first');
    const queued = [1, 2, 3].map((n) => gate.transaction(() => runner.query(`queued ${n}`)));
    await turn();
    expect(gate.mustWait()).toBe(true);
    const read = gate.untilNoOpenTransaction().then(() => log.push('read'));
    release();
    await Promise.all([first, ...queued, read]);
    expect(log).toEqual(['first', 'read', 'queued 1', 'queued 2', 'queued 3']);
  });

  it("turns TypeORM's implicit transactions outside any scope into autocommitted statements", async () => {
    const log: string[] = [];
    const runner = new SqliteTransactionGate().gate(fakeRunner(log));
    await runner.startTransaction();
    await runner.query('INSERT');
    await runner.commitTransaction();
    await runner.startTransaction();
    await runner.rollbackTransaction();
    expect(log).toEqual(['INSERT']);
  });

  it('gates a runner once, however often it is handed out', () => {
    const gate = new SqliteTransactionGate();
    const runner = fakeRunner([]);
    const query = gate.gate(runner).query;
    expect(gate.gate(runner).query).toBe(query);
  });

  it('says when a read must wait', async () => {
    const gate = new SqliteTransactionGate();
    expect(gate.mustWait()).toBe(false);
    let release!: () => void;
    let insideMustWait: boolean | undefined;
    const transaction = gate.transaction(async () => {
      insideMustWait = gate.mustWait();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await turn();
    expect(insideMustWait).toBe(false);
    expect(gate.mustWait()).toBe(true);
    release();
    await transaction;
    expect(gate.mustWait()).toBe(false);
  });
});
