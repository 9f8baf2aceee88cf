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
    return this.companies.findOne({ where: { id }, select: FACT_COLUMNS });
  }

  byRelayUsername(relayUsername: string): Promise<CompanyRelayFacts | null> {
    return this.companies.findOne({ where: { relayUsername }, select: FACT_COLUMNS });
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
