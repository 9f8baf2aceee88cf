import { DatabaseRuntime, HotRead } from '../src/database/database-runtime';
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

  it("answers while another request's transaction holds the connection (SQLite: through the read-only connection)", async () => {
    const opened = latch();
    const held = latch();
    const tx = transactions.run(async (em) => {
      await em.query('SELECT 1');
      opened.open();
      await held.wait;
    });
    await Promise.race([opened.wait, tx]);
    // Asked from outside the transaction, as another request would: not held up by it.
    let answered: ReadonlyArray<readonly unknown[]> | undefined;
    void Promise.resolve(read.all([[companies[2].id], 0, [companies[2].uuid]])).then(
      (rows) => (answered = rows),
    );
    await until(() => answered !== undefined, 'the read answered while the transaction was open', 3_000);
    expect(answered).toEqual([[companies[2].uuid]]);
    held.open();
    await tx;
  });

  it('refuses an empty list', async () => {
    await expect(read.all([[], 0, ['x']])).rejects.toThrow('an empty list');
  });
});
