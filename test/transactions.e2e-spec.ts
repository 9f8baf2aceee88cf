import { setImmediate as nextTurn } from 'node:timers/promises';
import { EntityManager, Repository } from 'typeorm';
import { DatabaseRuntime } from '../src/database/database-runtime';
import { SqliteRuntime } from '../src/database/sqlite/sqlite-runtime';
import { TransactionService } from '../src/database/transaction.service';
import { RevokedRefreshToken } from '../src/modules/auth/entities/revoked-refresh-token.entity';
import { PrincipalRepository } from '../src/modules/auth/principal.repository';
import { User } from '../src/modules/users/entities/user.entity';
import { createActiveUser } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';
import { latch, until } from './support/until';

const row = (hash: string) => ({ tokenHash: hash.padEnd(64, '0'), expiresAt: new Date(Date.now() + 60_000) });

/**
 * Work outside a transaction never becomes part of it, on either database: on SQLite (one
 * shared connection) the gate holds it back until the transaction ends.
 */
describe('Transactions and the work of other requests', () => {
  let t: TestApp;
  let transactions: TransactionService;
  let runtime: DatabaseRuntime;
  let tokens: Repository<RevokedRefreshToken>;

  beforeAll(async () => {
    t = await createTestApp({ smtp: true });
    transactions = t.app.get(TransactionService);
    runtime = t.app.get(DatabaseRuntime);
    tokens = t.dataSource.getRepository(RevokedRefreshToken);
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    await tokens.clear();
  });

  /**
   * A transaction that does `first`, then stays open until `rollBack()` and rolls back. `opened`
   * resolves once `first` is done.
   */
  function openTransaction(first: (manager: EntityManager) => Promise<unknown>) {
    const done = latch();
    const held = latch();
    const failing = transactions.run(async (manager) => {
      await first(manager);
      done.open();
      await held.wait;
      throw new Error('rolled back on purpose');
    });
    return {
      opened: Promise.race([done.wait, failing]),
      rollBack: async () => {
        held.open();
        await expect(failing).rejects.toThrow('rolled back on purpose');
      },
    };
  }

  /**
   * Until `outside` has gone as far as it may while a transaction is open: on SQLite, `statements`
   * of it queued at the gate; on PostgreSQL, done (it has a connection of its own). Settled work
   * ends the wait too: were it let into the transaction, the assertions after say so.
   */
  async function heldBack(outside: Promise<unknown>, statements: number): Promise<void> {
    let settled = false;
    void outside.then(
      () => (settled = true),
      () => (settled = true),
    );
    const waiting = () => (runtime instanceof SqliteRuntime ? runtime.gate.waiting : 0);
    await until(() => settled || waiting() >= statements, 'the outside work is done or queued');
  }

  it('keeps an outside write when the open transaction rolls back', async () => {
    const tx = openTransaction((manager) => manager.insert(RevokedRefreshToken, row('a')));
    await tx.opened;
    // save() (TypeORM's implicit transaction) and a plain insert, both from "another request".
    const outside = Promise.all([tokens.save(tokens.create(row('b'))), tokens.insert(row('c'))]);
    await heldBack(outside, 2);
    await tx.rollBack();
    await outside;
    const hashes = (await tokens.find()).map((r) => r.tokenHash[0]).sort();
    expect(hashes).toEqual(['b', 'c']);
  });

  it('does not let an outside read see what the transaction has not committed', async () => {
    const tx = openTransaction((manager) => manager.insert(RevokedRefreshToken, row('d')));
    await tx.opened;
    const seen = tokens.count();
    await heldBack(seen, 1);
    await tx.rollBack();
    // SQLite: the read waited for the rollback; PostgreSQL: it read the last committed state.
    expect(await seen).toBe(0);
  });

  it('does not let the access guard read a user row the transaction has not committed', async () => {
    const { userUuid } = await createActiveUser(t);
    const suspending = openTransaction((manager) =>
      manager.update(User, { uuid: userUuid }, { status: 'suspended' }),
    );
    await suspending.opened;
    const principal = Promise.resolve(t.app.get(PrincipalRepository).findUser(userUuid));
    await heldBack(principal, 1);
    await suspending.rollBack();
    expect((await principal)?.status).toBe('active');
  });

  it("keeps TypeORM's own transaction atomic (a save() of several rows outside any transaction), as on PostgreSQL", async () => {
    // One row a statement, the second breaking NOT NULL: the first must not stay.
    const rows = [row('m'), { ...row('o'), expiresAt: null }] as unknown as RevokedRefreshToken[];
    await expect(tokens.save(rows, { chunk: 1 })).rejects.toThrow();
    expect(await tokens.findOneBy({ tokenHash: row('m').tokenHash })).toBeNull();
    await tokens.save([row('m'), row('n')] as RevokedRefreshToken[], { chunk: 1 });
    expect((await tokens.find({ order: { tokenHash: 'ASC' } })).map((r) => r.tokenHash[0])).toEqual([
      'm',
      'n',
    ]);
  });

  it('nests a transaction begun inside another instead of waiting for it forever', async () => {
    await transactions.run(async (manager) => {
      await manager.insert(RevokedRefreshToken, row('e'));
      await transactions
        .run(async (inner) => {
          await inner.insert(RevokedRefreshToken, row('f'));
          throw new Error('inner fails');
        })
        .catch(() => undefined);
    });
    expect((await tokens.find()).map((r) => r.tokenHash[0])).toEqual(['e']);
  });

  it('gives each row-locking transaction running at once a counter shard of its own on PostgreSQL, shard 0 on SQLite', async () => {
    const concurrent = 4;
    const shards: number[] = [];
    const allIn = latch();
    await Promise.all(
      Array.from({ length: concurrent }, () =>
        transactions.runRowLocking(async (em) => {
          shards.push(transactions.counterShard(em));
          if (!runtime.isPostgres) return; // one transaction at a time: none would ever see the others
          if (shards.length === concurrent) allIn.open();
          await allIn.wait;
        }),
      ),
    );
    expect(shards).toHaveLength(concurrent);
    if (runtime.isPostgres) expect(new Set(shards).size).toBe(concurrent);
    else expect(shards).toEqual(Array(concurrent).fill(0));
    expect(transactions.counterShard(undefined)).toBe(0);
  });

  describe('before-commit work', () => {
    it('runs inside the transaction after its work, in the order registered, before the after-commit callbacks', async () => {
      const order: string[] = [];
      await transactions.run(async (manager, tx) => {
        await transactions.beforeCommit(manager, async () => {
          order.push(`first sees ${await manager.count(RevokedRefreshToken)}`);
          // Work registered by finishing work runs too, still before the commit.
          await transactions.beforeCommit(manager, async () => {
            await manager.insert(RevokedRefreshToken, row('bc2'));
            order.push('registered while finishing');
          });
        });
        await transactions.beforeCommit(manager, () => Promise.resolve(order.push('second')));
        tx.afterCommit(() => order.push('after commit'));
        await manager.insert(RevokedRefreshToken, row('bc1'));
        order.push('work done');
      });
      expect(order).toEqual([
        'work done',
        'first sees 1',
        'second',
        'registered while finishing',
        'after commit',
      ]);
      expect(await tokens.count()).toBe(2);
    });

    it('rolls the whole transaction back when it fails', async () => {
      await expect(
        transactions.run(async (manager) => {
          await manager.insert(RevokedRefreshToken, row('bc3'));
          await transactions.beforeCommit(manager, () => Promise.reject(new Error('finishing failed')));
        }),
      ).rejects.toThrow('finishing failed');
      expect(await tokens.count()).toBe(0);
    });

    it('runs at once outside any transaction', async () => {
      let ran = false;
      await transactions.beforeCommit(undefined, () => Promise.resolve((ran = true)));
      expect(ran).toBe(true);
    });
  });

  describe('after-commit callbacks', () => {
    it('run once the transaction has committed, when its writes are visible to everyone', async () => {
      const seen: number[] = [];
      const result = await transactions.run(async (manager, tx) => {
        await manager.insert(RevokedRefreshToken, row('m'));
        tx.afterCommit(async () => {
          seen.push(await tokens.count()); // an outside read: on SQLite it would wait for the commit forever
        });
        transactions.afterCommit(manager, async () => {
          seen.push(await tokens.count());
        });
        expect(seen).toEqual([]);
        return 'done';
      });
      expect(result).toBe('done');
      expect(seen).toEqual([1, 1]);
    });

    it('are dropped when the transaction rolls back', async () => {
      const ran: string[] = [];
      await expect(
        transactions.run(async (manager, tx) => {
          await manager.insert(RevokedRefreshToken, row('n'));
          tx.afterCommit(() => ran.push('scope'));
          transactions.afterCommit(manager, () => ran.push('manager'));
          throw new Error('rolled back on purpose');
        }),
      ).rejects.toThrow('rolled back on purpose');
      await transactions.settled();
      expect(ran).toEqual([]);
      expect(await tokens.count()).toBe(0);
    });

    it('are logged, not thrown, when they fail, and do not stop the ones after them', async () => {
      const ran: string[] = [];
      await expect(
        transactions.run(async (manager, tx) => {
          await manager.insert(RevokedRefreshToken, row('o'));
          tx.afterCommit(() => {
            throw new Error('side effect failed');
          });
          tx.afterCommit(() => Promise.reject(new Error('async side effect failed')));
          tx.afterCommit(() => ran.push('third'));
          return 'committed';
        }),
      ).resolves.toBe('committed');
      expect(ran).toEqual(['third']);
      expect(await tokens.count()).toBe(1);
    });

    it('of a nested transaction wait for the outer one and are dropped with it', async () => {
      const ran: string[] = [];
      await expect(
        transactions.run(async (manager, tx) => {
          await manager.insert(RevokedRefreshToken, row('p'));
          tx.afterCommit(() => ran.push('outer'));
          await transactions.run(async (inner, innerTx) => {
            await inner.insert(RevokedRefreshToken, row('q'));
            innerTx.afterCommit(() => ran.push('inner'));
          });
          await transactions
            .run((_inner, innerTx) => {
              innerTx.afterCommit(() => ran.push('failed inner'));
              return Promise.reject(new Error('inner fails'));
            })
            .catch(() => undefined);
          // Through the manager too, after the nested transactions (on SQLite they shared it).
          transactions.afterCommit(manager, () => ran.push('outer via manager'));
          // On SQLite the inner transaction is a savepoint of this one: nothing has committed yet.
          if (!runtime.isPostgres) expect(ran).toEqual([]);
          throw new Error('outer rolls back');
        }),
      ).rejects.toThrow('outer rolls back');
      // PostgreSQL runs the inner transaction on a connection of its own: it committed by itself.
      expect(ran).toEqual(runtime.isPostgres ? ['inner'] : []);
    });

    it('not awaited by anyone are awaited by settled(), with the work they detach in turn', async () => {
      const ran: string[] = [];
      const release = latch();
      await transactions.run(async (manager) => {
        await manager.insert(RevokedRefreshToken, row('r'));
        transactions.afterCommit(manager, () =>
          transactions.detach(async () => {
            await release.wait;
            ran.push('detached');
            transactions.afterCommit(undefined, async () => {
              await nextTurn();
              ran.push('detached in turn');
            });
          }),
        );
      });
      expect(ran).toEqual([]);
      const settled = transactions.settled().then(() => ran.push('settled'));
      await nextTurn();
      expect(ran).toEqual([]);
      release.open();
      await settled;
      expect(ran).toEqual(['detached', 'detached in turn', 'settled']);
    });

    it('not awaited by anyone finish before the app closes its database', async () => {
      const other = await createTestApp({ smtp: false });
      let read: number | undefined;
      other.app.get(TransactionService).detach(async () => {
        await nextTurn();
        read = await other.dataSource.getRepository(RevokedRefreshToken).count();
      });
      await other.close();
      expect(read).toBe(0);
    });

    it('run at once for work outside any transaction', () => {
      const ran: string[] = [];
      transactions.afterCommit(undefined, () => ran.push('now'));
      transactions.afterCommit(t.dataSource.manager, () => ran.push('now too'));
      expect(ran).toEqual(['now', 'now too']);
    });
  });

  it('runs concurrent transactions one after another without losing any', async () => {
    await Promise.all(
      ['g', 'h', 'i', 'j'].map((h) =>
        transactions.run(async (manager) => {
          await manager.insert(RevokedRefreshToken, row(h));
          await nextTurn(); // open across a turn of the event loop, while the others ask to begin
        }),
      ),
    );
    expect(await tokens.count()).toBe(4);
  });
});
