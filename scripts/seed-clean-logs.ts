/**
 * npm run seed:clean-logs -- <companyUuid> [count]
 *
 * Writes `count` (default 1,000,000) made-up clean records of one company, spread over the last
 * 30 days, and their daily roll-up, straight into the configured database (DATABASE_URL, else
 * DATA_DIR's SQLite file): what the report figures of `npm run bench` run over, for trying the
 * reports by hand at that size. About a minute a million. Run the service once first (it
 * migrates the database). Seeds a company once.
 */
import 'dotenv/config';
import { seedCleanLogs } from '../bench/lib/delivery-data';
import { configuredDatabase } from '../bench/lib/database';

async function main(): Promise<void> {
  const [companyUuid, countText = '1000000'] = process.argv.slice(2);
  const count = Number(countText);
  if (!companyUuid || !Number.isInteger(count) || count < 1 || count > 10_000_000) {
    throw new Error('Usage: npm run seed:clean-logs -- <companyUuid> [count, 1..10000000]');
  }
  const db = configuredDatabase();
  const [company] = await db.query<{ id: number }>('SELECT id FROM companies WHERE uuid = ?', [companyUuid]);
  if (!company) throw new Error(`No company ${companyUuid}`);
  const seeded = await db.query('SELECT 1 FROM clean_logs WHERE company_id = ? AND host = ? LIMIT 1', [
    company.id,
    'seed1',
  ]);
  if (seeded.length) throw new Error(`Company ${companyUuid} is seeded already`);
  const started = performance.now();
  await seedCleanLogs(db, Number(company.id), companyUuid, count);
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `${count} clean records of ${companyUuid} written to the ${db.kind} database in ${seconds.toFixed(1)} s`,
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
