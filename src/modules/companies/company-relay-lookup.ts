import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
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

/**
 * The companies area's answers to the relay decision, each one indexed lookup (by primary key or
 * the unique relay username). Kept apart from CompaniesService so the Postfix policy server can
 * load it without the HTTP side of the area.
 */
@Injectable()
export class CompanyRelayLookup {
  constructor(@InjectRepository(Company) private readonly companies: Repository<Company>) {}

  byId(id: number): Promise<CompanyRelayFacts | null> {
    return this.one('id = :key', id);
  }

  byRelayUsername(relayUsername: string): Promise<CompanyRelayFacts | null> {
    return this.one('relay_username = :key', relayUsername);
  }

  /**
   * Raw SQL through the driver's parameter escaping, hydrated with the entity's own column
   * conversions: this runs on the relay's path, where the query builder costs more than the lookup.
   */
  private async one(condition: string, key: number | string): Promise<CompanyRelayFacts | null> {
    const driver = this.companies.manager.connection.driver;
    const columns = FACT_COLUMNS.map((property) =>
      this.companies.metadata.findColumnWithPropertyName(property)!,
    );
    const [sql, params] = driver.escapeQueryWithParameters(
      `SELECT ${columns.map((c) => c.databaseName).join(', ')} FROM companies WHERE ${condition}`,
      { key },
      {},
    );
    const [row] = await this.companies.query<Array<Record<string, unknown>>>(sql, params);
    if (!row) return null;
    const facts: Record<string, unknown> = {};
    for (const column of columns) {
      facts[column.propertyName] = driver.prepareHydratedValue(row[column.databaseName], column);
    }
    return facts as unknown as CompanyRelayFacts;
  }

  /**
   * Every company that lists networks allowed to relay without SMTP authentication. Few
   * companies do (those on a mailbox suite), so the decision holds them all in memory and
   * matches a client address there rather than in SQL, which cannot index CIDRs portably.
   */
  async withAllowedIps(): Promise<Array<{ id: number; allowedIps: string[] }>> {
    const rows = await this.companies
      .createQueryBuilder('company')
      .select(['company.id', 'company.allowedIps'])
      .where("company.allowed_ips <> '[]'")
      .getMany();
    return rows.filter((row) => row.allowedIps.length > 0);
  }
}
