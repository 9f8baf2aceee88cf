import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { DatabaseRuntime, HotRead, KeyedRead, ReadRow } from '../../database/database-runtime';
import { Company } from './entities/company.entity';

/** What the relay decision needs of a company: its identity and the facts of its relay state. */
export type CompanyRelayFacts = Pick<
  Company,
  'id' | 'uuid' | 'relayUsername' | 'status' | 'packageUuid' | 'periodEnd' | 'quota' | 'used'
>;

const FACT_COLUMNS: Array<keyof CompanyRelayFacts> = [
  'id',
  'uuid',
  'relayUsername',
  'status',
  'packageUuid',
  'periodEnd',
  'quota',
  'used',
];

/** A company found by a key (its id as text, or its relay username) and its facts. */
type Found = readonly [key: string, facts: CompanyRelayFacts];

/**
 * The companies area's answers to the relay decision, each an indexed lookup (by primary key or
 * the unique relay username). Kept apart from CompaniesService so the Postfix policy server can
 * load it without the HTTP side of the area.
 *
 * Both lookups run on every decision whose company is not cached (a relay of many companies, or
 * the first message after a change): prepared statements straight on the driver, and on
 * PostgreSQL the keys of concurrent decisions in one statement (DatabaseRuntime.keyedRead), so fifty
 * decisions cost one round trip instead of fifty.
 */
@Injectable()
export class CompanyRelayLookup {
  private readonly columns: ColumnMetadata[];
  private readonly byIdRead: KeyedRead<Found>;
  private readonly byUsernameRead: KeyedRead<Found>;
  private readonly allowedIpLists: HotRead;

  constructor(
    @InjectRepository(Company) private readonly companies: Repository<Company>,
    runtime: DatabaseRuntime,
  ) {
    const columns = (this.columns = FACT_COLUMNS.map((property) =>
      companies.metadata.findColumnWithPropertyName(property)!,
    ));
    const lookup = (name: string, keyColumn: 'id' | 'relay_username') => {
      const read = runtime.read(
        name,
        `SELECT ${keyColumn}, ${columns.map((c) => c.databaseName).join(', ')} FROM companies WHERE ${keyColumn} {list}`,
      );
      const keyed = (rows: ReadRow[]): Found[] =>
        rows.map(([key, ...values]) => [String(key), this.hydrate(values)]);
      const run = async (keys: string[]): Promise<Found[]> =>
        keyed(await read.all([keyColumn === 'id' ? keys.map(Number) : keys]));
      return runtime.keyedRead<Found>(run);
    };
    this.byIdRead = lookup('company_facts_by_id', 'id');
    this.byUsernameRead = lookup('company_facts_by_relay_username', 'relay_username');
    this.allowedIpLists = runtime.read(
      'company_allowed_ip_lists',
      "SELECT id, allowed_ips FROM companies WHERE allowed_ips <> '[]' ORDER BY id",
    );
  }

  byId(id: number): Promise<CompanyRelayFacts | null> {
    return this.one(this.byIdRead, String(id));
  }

  byRelayUsername(relayUsername: string): Promise<CompanyRelayFacts | null> {
    return this.one(this.byUsernameRead, relayUsername);
  }

  private async one(read: KeyedRead<Found>, key: string): Promise<CompanyRelayFacts | null> {
    return (await read.load([key])).get(key)?.[1] ?? null;
  }

  /** A row's values, in FACT_COLUMNS' order, through the entity's own column conversions. */
  private hydrate(values: readonly unknown[]): CompanyRelayFacts {
    const driver = this.companies.manager.dataSource.driver;
    const facts: Record<string, unknown> = {};
    this.columns.forEach((column, i) => {
      facts[column.propertyName] = driver.prepareHydratedValue(values[i], column) as unknown;
    });
    return facts as unknown as CompanyRelayFacts;
  }

  /**
   * Every company that lists networks allowed to relay without SMTP authentication, in id order,
   * each list as stored (JSON text). Few companies do (those on a mailbox suite), so the decision
   * holds them all in memory and matches a client address there rather than in SQL, which cannot
   * index CIDRs portably; the text lets it see at once whether anything changed since it built
   * its table.
   */
  async withAllowedIps(): Promise<Array<{ id: number; allowedIps: string }>> {
    const rows = await this.allowedIpLists.all([]);
    return rows.map(([id, allowedIps]) => ({ id: Number(id), allowedIps: String(allowedIps) }));
  }
}
