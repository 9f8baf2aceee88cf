import { Injectable, Module } from '@nestjs/common';
import { InjectRepository, TypeOrmModule } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { DomainEvents } from './domain-events';
import { Domain } from './entities/domain.entity';

/** The domains area's answers to the relay decision and the spam reports. */
@Injectable()
export class DomainLookup {
  constructor(@InjectRepository(Domain) private readonly domains: Repository<Domain>) {}

  /**
   * The id of the company owning the verified domain with this exact name (lower-case,
   * punycode), or null: one lookup on the unique index of verified names.
   */
  async verifiedDomainOwner(name: string): Promise<number | null> {
    // Raw SQL: on the relay's path, where the query builder costs more than the lookup.
    const [sql, params] = this.domains.manager.connection.driver.escapeQueryWithParameters(
      "SELECT company_id FROM domains WHERE name = :name AND status = 'verified'",
      { name },
      {},
    );
    const rows: Array<{ company_id: number }> = await this.domains.query(sql, params);
    return rows.length ? Number(rows[0].company_id) : null;
  }

  /** The names of the company's verified domains, in alphabetical order. */
  async verifiedNames(companyId: number): Promise<string[]> {
    const rows = await this.domains.find({
      select: { name: true },
      where: { companyId, status: 'verified' },
      order: { name: 'ASC' },
    });
    return rows.map((d) => d.name);
  }
}

/**
 * DomainLookup and DomainEvents alone: DomainsModule imports and re-exports it (one
 * DomainEvents in the API); the Postfix policy server imports just this.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Domain])],
  providers: [DomainLookup, DomainEvents],
  exports: [DomainLookup, DomainEvents],
})
export class DomainLookupModule {}
