import { DataSource } from 'typeorm';
import { PreparedReads } from '../src/database/prepared-read';
import { TransactionService } from '../src/database/transaction.service';
import { Company } from '../src/modules/companies/entities/company.entity';
import { createActiveUser } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

/** PreparedReads on the database of the run: one UNION ALL on PostgreSQL, statements apart on SQLite, the same answers. Parts select the same columns. */
describe('PreparedReads', () => {
  let t: TestApp;
  let reads: PreparedReads;
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
    reads = new PreparedReads(t.app.get(DataSource), transactions, 'prepared_reads_spec', [
      'SELECT uuid FROM companies WHERE id {list} AND id > ?',
      'SELECT uuid FROM companies WHERE id = ?',
      'SELECT uuid FROM companies WHERE uuid {list} AND id {list}',
    ]);
  });
  afterAll(async () => {
    await t.close();
  });

  const uuids = (rows: ReadonlyArray<readonly unknown[]>) => rows.map((r) => r[0]).sort();

  it('answers each part its own rows, lists of any length padded or not', async () => {
    const ids = companies.map((c) => c.id);
    for (const length of [1, 2, 3, 5, 6]) {
      const [first, second, third] = await reads.all([
        [ids.slice(0, length), 0],
        [ids[0]],
        [companies.map((c) => c.uuid), ids.slice(length - 1, length)],
      ]);
      expect(uuids(first)).toEqual(
        companies
          .slice(0, length)
          .map((c) => c.uuid)
          .sort(),
      );
      expect(second).toEqual([[companies[0].uuid]]);
      expect(third).toEqual([[companies[length - 1].uuid]]);
    }
  });

  it('binds the scalar parameters after a list in their place', async () => {
    const ids = companies.map((c) => c.id);
    const [first, second, third] = await reads.all([[ids, ids[3]], [-1], [[companies[0].uuid], [ids[1]]]]);
    expect(uuids(first)).toEqual(
      companies
        .slice(4)
        .map((c) => c.uuid)
        .sort(),
    );
    expect(second).toEqual([]);
    expect(third).toEqual([]);
  });

  it('waits for a transaction that holds the connection, and then answers', async () => {
    let answered: ReadonlyArray<readonly unknown[]> | undefined;
    await transactions.run(async () => {
      const pending = Promise.resolve(
        reads.all([[[companies[2].id], 0], [companies[2].id], [[companies[2].uuid], [companies[2].id]]]),
      );
      void pending.then(([first]) => (answered = first));
      await new Promise((resolve) => setTimeout(resolve, 20));
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(answered).toEqual([[companies[2].uuid]]);
  });

  it('refuses an empty list or a wrong number of parameter lists', () => {
    expect(() => reads.all([[[], 0], [1], [['x'], [1]]])).toThrow('an empty list');
    expect(() => reads.all([[[1], 0]])).toThrow('3 parts, 1 parameter lists');
  });
});
