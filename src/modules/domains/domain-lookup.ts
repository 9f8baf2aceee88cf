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
    const domain = await this.domains.findOne({
      where: { name, status: 'verified' },
      select: { id: true, companyId: true },
    });
    return domain?.companyId ?? null;
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
