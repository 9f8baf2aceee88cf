import { MigrationInterface, QueryRunner, TableColumn } from 'typeorm';

const TABLES = ['clean_log_daily', 'deliverability_hourly', 'bounce_samples'];

/**
 * The roll-ups' cells and the bounce samples keyed by shard too (TransactionService.counterShard):
 * concurrent log batches of one busy company add to rows of their own shard instead of waiting for
 * each other's, and the readers sum the shards (the samples: the latest of them). The cells so far
 * are shard 0.
 */
export class RollUpShards1765324800000 implements MigrationInterface {
  name = 'RollUpShards1765324800000';

  async up(qr: QueryRunner): Promise<void> {
    for (const table of TABLES) {
      await qr.addColumn(
        table,
        new TableColumn({ name: 'shard', type: 'integer', default: 0, isPrimary: true }),
      );
    }
  }

  async down(qr: QueryRunner): Promise<void> {
    // The shards of each cell folded into shard 0 before the column goes.
    await qr.query(
      'INSERT INTO clean_log_daily (company_id, day, sender_domain, status, shard, records, opened, clicked) ' +
        'SELECT company_id, day, sender_domain, status, -1, SUM(records), SUM(opened), SUM(clicked) FROM clean_log_daily ' +
        'GROUP BY company_id, day, sender_domain, status',
    );
    await qr.query(
      'INSERT INTO deliverability_hourly (company_id, hour, sender_domain, provider, status, bounce_type, bounce_category, bounce_rule, shard, records) ' +
        'SELECT company_id, hour, sender_domain, provider, status, bounce_type, bounce_category, bounce_rule, -1, SUM(records) FROM deliverability_hourly ' +
        'GROUP BY company_id, hour, sender_domain, provider, status, bounce_type, bounce_category, bounce_rule',
    );
    await qr.query(
      'DELETE FROM bounce_samples WHERE EXISTS (SELECT 1 FROM bounce_samples later WHERE later.company_id = bounce_samples.company_id ' +
        'AND later.rule = bounce_samples.rule AND (later.at > bounce_samples.at OR (later.at = bounce_samples.at AND later.shard > bounce_samples.shard)))',
    );
    await qr.query('DELETE FROM clean_log_daily WHERE shard <> -1');
    await qr.query('DELETE FROM deliverability_hourly WHERE shard <> -1');
    for (const table of TABLES) await qr.dropColumn(table, 'shard');
  }
}
