import { Injectable, Module } from '@nestjs/common';
import { InjectRepository, TypeOrmModule } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { DatabaseRuntime, KeyedRead, ReadRow } from '../../database/database-runtime';
import { DomainEvents } from './domain-events';
import { Domain } from './entities/domain.entity';

/** The domains area's answers to the relay decision and the spam reports. */
@Injectable()
export class DomainLookup {
  /** Verified names and their owners; on PostgreSQL the names of concurrent decisions in one statement. */
  private readonly owners: KeyedRead<ReadRow>;

  constructor(
    @InjectRepository(Domain) private readonly domains: Repository<Domain>,
    runtime: DatabaseRuntime,
  ) {
    // Straight on the driver: this runs for every relay decision whose sender's domain is not cached.
    const read = runtime.read(
      'verified_domain_owners',
      "SELECT name, company_id FROM domains WHERE name {list} AND status = 'verified'",
    );
    const owners = (names: string[]) => read.all([names]);
    this.owners = runtime.keyedRead<ReadRow>(owners);
  }

  /**
   * The id of the company owning the verified domain with this exact name (lower-case,
   * punycode), or null: one lookup on the unique index of verified names.
   */
  async verifiedDomainOwner(name: string): Promise<number | null> {
    const owner = (await this.owners.load([name])).get(name);
    return owner ? Number(owner[1]) : null;
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
