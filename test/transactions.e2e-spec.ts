import { Repository } from 'typeorm';
import { TransactionService } from '../src/database/transaction.service';
import { RevokedRefreshToken } from '../src/modules/auth/entities/revoked-refresh-token.entity';
import { PrincipalRepository } from '../src/modules/auth/principal.repository';
import { User } from '../src/modules/users/entities/user.entity';
import { createActiveUser } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

/** A promise to resolve by hand: holds a transaction open while other requests run. */
function latch(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 20));
const row = (hash: string) => ({ tokenHash: hash.padEnd(64, '0'), expiresAt: new Date(Date.now() + 60_000) });

/**
 * Work outside a transaction never becomes part of it, on either database: on SQLite (one
 * shared connection) the gate holds it back until the transaction ends.
 */
describe('Transactions and the work of other requests', () => {
  let t: TestApp;
  let transactions: TransactionService;
  let tokens: Repository<RevokedRefreshToken>;

  beforeAll(async () => {
    t = await createTestApp({ smtp: true });
    transactions = t.app.get(TransactionService);
    tokens = t.dataSource.getRepository(RevokedRefreshToken);
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    await tokens.clear();
  });

  it('keeps an outside write when the open transaction rolls back', async () => {
    const held = latch();
    const failing = transactions.run(async (manager) => {
      await manager.insert(RevokedRefreshToken, row('a'));
      await held.wait;
      throw new Error('rolled back on purpose');
    });
    await tick();
    // save() (TypeORM's implicit transaction) and a plain insert, both from "another request".
    const outside = Promise.all([tokens.save(tokens.create(row('b'))), tokens.insert(row('c'))]);
    await tick();
    held.open();
    await expect(failing).rejects.toThrow('rolled back on purpose');
    await outside;
    const hashes = (await tokens.find()).map((r) => r.tokenHash[0]).sort();
    expect(hashes).toEqual(['b', 'c']);
  });

  it('does not let an outside read see what the transaction has not committed', async () => {
    const held = latch();
    const failing = transactions.run(async (manager) => {
      await manager.insert(RevokedRefreshToken, row('d'));
      await held.wait;
      throw new Error('rolled back on purpose');
    });
    await tick();
    const seen = tokens.count();
    await tick();
    held.open();
    await expect(failing).rejects.toThrow('rolled back on purpose');
    // SQLite: the read waited for the rollback; PostgreSQL: it read the last committed state.
    expect(await seen).toBe(0);
  });

  it('does not let the access guard read a user row the transaction has not committed', async () => {
    const { userUuid } = await createActiveUser(t);
    const held = latch();
    const suspending = transactions.run(async (manager) => {
      await manager.update(User, { uuid: userUuid }, { status: 'suspended' });
      await held.wait;
      throw new Error('rolled back on purpose');
    });
    await tick();
    const principal = t.app.get(PrincipalRepository).findUser(userUuid);
    await tick();
    held.open();
    await expect(suspending).rejects.toThrow('rolled back on purpose');
    expect((await principal)?.status).toBe('active');
  });

  it('gives dataSource.transaction() the same protection as TransactionService', async () => {
    const held = latch();
    const failing = t.dataSource.transaction(async (manager) => {
      await manager.insert(RevokedRefreshToken, row('k'));
      await held.wait;
      await manager.insert(RevokedRefreshToken, row('k')); // the same key: the whole transaction fails
    });
    await tick();
    const outside = tokens.insert(row('l'));
    await tick();
    held.open();
    await expect(failing).rejects.toThrow();
    await outside;
    expect((await tokens.find()).map((r) => r.tokenHash[0])).toEqual(['l']);
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
      await tick();
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
          if (!transactions.isPostgres) expect(ran).toEqual([]);
          throw new Error('outer rolls back');
        }),
      ).rejects.toThrow('outer rolls back');
      // PostgreSQL runs the inner transaction on a connection of its own: it committed by itself.
      expect(ran).toEqual(transactions.isPostgres ? ['inner'] : []);
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
          await tick();
        }),
      ),
    );
    expect(await tokens.count()).toBe(4);
  });
});
