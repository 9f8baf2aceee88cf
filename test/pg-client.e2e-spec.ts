import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { PgClient } from '../src/database/postgres/pg-client';
import { Company } from '../src/modules/companies/entities/company.entity';
import { createActiveUser } from './support/factories';
import { LOOP_END, LOOP_START } from './support/pg-client-gc-probe';
import { createTestApp, TestApp } from './support/test-app';

/** Rows of 700 bytes read by the memory probe: 140 MB through one client, 500 a query. */
const PROBE_ROWS = 200_000;

/**
 * What V8 did while a Node process of its own read PROBE_ROWS rows through `form`: bytes promoted
 * to the old generation by young-generation collections, and full (mark-compact) collections,
 * summed from `--trace-gc-nvp` between the probe's marker lines.
 */
async function collectionsWhileReading(form: 'pg' | 'PgClient', url: string) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      '--trace-gc-nvp',
      '-r',
      'ts-node/register/transpile-only',
      join(__dirname, 'support', 'pg-client-gc-probe.ts'),
      form,
      url,
      String(PROBE_ROWS),
    ],
    { cwd: join(__dirname, '..'), maxBuffer: 256 * 1024 * 1024 },
  );
  const lines = stdout.split('\n');
  const reading = lines.slice(lines.indexOf(LOOP_START), lines.indexOf(LOOP_END));
  expect(reading.length).toBeGreaterThan(0);
  expect(lines).toContain(`ROWS ${PROBE_ROWS}`);
  let promoted = 0;
  let full = 0;
  // Node 20's V8 prints `promoted=N … gc=mc`; later ones (Node 26) a JSON object: `"promoted":N`, `"gc":"mc"`.
  for (const line of reading) {
    promoted += Number(/"?\bpromoted"?[=:](\d+)/.exec(line)?.[1] ?? 0);
    if (/"?\bgc"?[=:]"?mc\b/.test(line)) full++;
  }
  return { promotedMb: promoted / 1e6, full };
}

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

  // The reason PgClient exists (pg-client.ts): through pg's promise form the rows of every query
  // survive young-generation collections and are promoted, to wait for a full collection. When a
  // pg release stops doing that, the first expectation fails, and PgClient can go.
  it("keeps the rows of a long read out of the old generation, where pg's own promise form promotes them", async () => {
    const url = String((t.dataSource.options as { url: string }).url);
    const own = await collectionsWhileReading('pg', url);
    const ours = await collectionsWhileReading('PgClient', url);
    expect(own.promotedMb).toBeGreaterThan(50);
    expect(ours.promotedMb).toBeLessThan(own.promotedMb / 5);
    expect(ours.full).toBeLessThanOrEqual(own.full);
    console.log(
      `PgClient memory probe, ${PROBE_ROWS} rows of 700 bytes: pg's promise form promoted ` +
        `${own.promotedMb.toFixed(1)} MB (${own.full} full collections), PgClient ` +
        `${ours.promotedMb.toFixed(1)} MB (${ours.full})`,
    );
  }, 60_000);
});
