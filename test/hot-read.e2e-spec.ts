import { DatabaseRuntime, HotRead } from '../src/database/database-runtime';
import { SqliteRuntime } from '../src/database/sqlite/sqlite-runtime';
import { TransactionService } from '../src/database/transaction.service';
import { Company } from '../src/modules/companies/entities/company.entity';
import { createActiveUser } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';
import { latch, until } from './support/until';

/** A hot read with lists on the database of the run: `= ANY` on PostgreSQL, `IN (… json_each)` on SQLite, the same answers. */
describe('DatabaseRuntime.read with lists', () => {
  let t: TestApp;
  let read: HotRead;
  let transactions: TransactionService;
  let companies: Company[];

  beforeAll(async () => {
    t = await createTestApp();
    transactions = t.app.get(TransactionService);
    const users = await Promise.all(Array.from({ length: 6 }, () => createActiveUser(t)));
    companies = (
      await Promise.all(
        users.map((u) => t.dataSource.getRepository(Company).findOneByOrFail({ uuid: u.companyUuid })),
      )
    ).sort((a, b) => a.id - b.id);
    read = t.app
      .get(DatabaseRuntime)
      .read(
        'prepared_list_read_spec',
        'SELECT uuid FROM companies WHERE id {list} AND id > ? AND uuid {list}',
      );
  });
  afterAll(async () => {
    await t.close();
  });

  const uuids = (rows: ReadonlyArray<readonly unknown[]>) => rows.map((r) => r[0]).sort();

  it('binds lists of any length, padded or not, and the scalars between them in their place', async () => {
    const ids = companies.map((c) => c.id);
    const all = companies.map((c) => c.uuid);
    for (const length of [1, 2, 3, 5, 6]) {
      expect(uuids(await read.all([ids.slice(0, length), 0, all]))).toEqual(all.slice(0, length).sort());
      expect(uuids(await read.all([ids, ids[length - 1], all.slice(0, 4)]))).toEqual(
        all.slice(length, 4).sort(),
      );
    }
  });

  it('matches list values that look like the array syntax (quotes, backslashes, braces, commas, NULL) only to themselves', async () => {
    const awkward = ['"quoted"@x.test', 'back\\slash@x.test', '{a,b}@x.test', 'NULL', ' spaced ', 'ünï 😀'];
    const runtime = t.app.get(DatabaseRuntime);
    const echo = runtime.read(
      'prepared_list_values_spec',
      'SELECT v FROM (SELECT ? AS v UNION ALL SELECT ? UNION ALL SELECT ?) s WHERE v {list}',
    );
    expect(uuids(await echo.all([awkward[0], awkward[1], 'other', awkward]))).toEqual(
      [awkward[0], awkward[1]].sort(),
    );
    expect(uuids(await echo.all(['NULL', '{a,b}@x.test', ' spaced ', ['{a,b}@x.test', 'spaced']]))).toEqual([
      '{a,b}@x.test',
    ]);
  });

  it("answers while another request's transaction is open (PostgreSQL), or once it ends, ahead of the transaction queued behind it (SQLite)", async () => {
    const runtime = t.app.get(DatabaseRuntime);
    const order: string[] = [];
    const opened = latch();
    const held = latch();
    const tx = transactions.run(async (em) => {
      await em.query('SELECT 1');
      opened.open();
      await held.wait;
      order.push('open transaction ends');
    });
    await Promise.race([opened.wait, tx]);
    const queued = transactions.run(async (em) => {
      await em.query('SELECT 1');
      order.push('queued transaction');
    });
    // Asked from outside the transactions, as another request would.
    let answered: ReadonlyArray<readonly unknown[]> | undefined;
    void read.all([[companies[2].id], 0, [companies[2].uuid]]).then((rows) => {
      answered = rows;
      order.push('read');
    });
    if (runtime instanceof SqliteRuntime) {
      await until(() => runtime.gate.waiting >= 2, 'the read and the second transaction wait');
      expect(answered).toBeUndefined();
    } else {
      await until(() => answered !== undefined, 'the read answered while the transaction was open');
    }
    held.open();
    await Promise.all([tx, queued]);
    expect(answered).toEqual([[companies[2].uuid]]);
    if (runtime instanceof SqliteRuntime) {
      expect(order).toEqual(['open transaction ends', 'read', 'queued transaction']);
    } else {
      // Each transaction has a connection of its own: the queued one did not wait either.
      expect(order.indexOf('read')).toBeLessThan(order.indexOf('open transaction ends'));
    }
  });

  it('refuses an empty list', async () => {
    await expect(read.all([[], 0, ['x']])).rejects.toThrow('an empty list');
  });
});
