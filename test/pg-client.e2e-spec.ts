import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { PgClient } from '../src/database/pg-client';
import { Company } from '../src/modules/companies/entities/company.entity';
import { createActiveUser } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;

/** The pool's clients answer pg's promise form through its callback form (see pg-client.ts), unchanged for their callers. */
onPostgres('PgClient (PostgreSQL runs)', () => {
  let t: TestApp;
  let pool: Pool;

  beforeAll(async () => {
    t = await createTestApp();
    pool = (t.app.get(DataSource).driver as unknown as { master: Pool }).master;
  });
  afterAll(async () => {
    await t.close();
  });

  it('is the client of the service pool', async () => {
    const client = await pool.connect();
    try {
      expect(client).toBeInstanceOf(PgClient);
    } finally {
      client.release();
    }
  });

  it('resolves rows through TypeORM, reads and writes alike', async () => {
    const user = await createActiveUser(t);
    const repository = t.dataSource.getRepository(Company);
    await repository.update({ uuid: user.companyUuid }, { name: 'Renamed through PgClient' });
    expect(await repository.findOneByOrFail({ uuid: user.companyUuid })).toMatchObject({
      name: 'Renamed through PgClient',
    });
    const rows: Array<{ n: number }> = await t.dataSource.query('SELECT $1::int + 1 AS n', [41]);
    expect(rows).toEqual([{ n: 42 }]);
  });

  it("rejects with pg's own error and its code for a failed statement", async () => {
    const user = await createActiveUser(t);
    const company = await t.dataSource.getRepository(Company).findOneByOrFail({ uuid: user.companyUuid });
    await expect(
      t.dataSource.query('INSERT INTO companies SELECT * FROM companies WHERE id = $1', [company.id]),
    ).rejects.toMatchObject({ driverError: { code: '23505' } });
    await expect(t.dataSource.query('SELECT * FROM no_such_table')).rejects.toMatchObject({
      driverError: { code: '42P01' },
    });
  });

  it('keeps the callback form and the query configs of pg as they were', async () => {
    const client = await pool.connect();
    try {
      const viaCallback = await new Promise<unknown[]>((resolve, reject) =>
        client.query('SELECT 7 AS n', (error, result) => (error ? reject(error) : resolve(result.rows))),
      );
      expect(viaCallback).toEqual([{ n: 7 }]);
      expect(
        (await client.query({ text: 'SELECT $1::text AS s', values: ['x'], rowMode: 'array' })).rows,
      ).toEqual([['x']]);
    } finally {
      client.release();
    }
  });
});
