/**
 * Run by test/pg-client.e2e-spec.ts in a Node process of its own, under `--trace-gc-nvp`:
 * reads `rows` rows of 700 bytes, 500 a query, from one client, pg's own (`pg`) or PgClient
 * (`PgClient`), between two marker lines, so that the collections of the reading alone can be
 * summed from the trace. Arguments: form, connection URL, rows.
 */
import { Client } from 'pg';
import { PgClient } from '../../src/database/postgres/pg-client';

export const LOOP_START = 'PROBE LOOP START';
export const LOOP_END = 'PROBE LOOP END';

async function main(): Promise<void> {
  const [form, connectionString, total] = [process.argv[2], process.argv[3], Number(process.argv[4])];
  const client = form === 'PgClient' ? new PgClient({ connectionString }) : new Client({ connectionString });
  await client.connect();
  let rows = 0;
  console.log(LOOP_START);
  for (let read = 0; read < total; read += 500) {
    const result = await client.query("SELECT n, repeat('x', 700) AS pad FROM generate_series(1, 500) AS n");
    rows += result.rows.length;
  }
  console.log(LOOP_END);
  await client.end();
  console.log(`ROWS ${rows}`);
}

if (require.main === module) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
