import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository } from 'typeorm';
import type { Package } from '../packages/entities/package.entity';
import { Company } from './entities/company.entity';

/** Which packages companies have: what the packages area asks before deleting one and for its admin counts. */
@Injectable()
export class CompanyPackageUsage {
  constructor(@InjectRepository(Company) private readonly companies: Repository<Company>) {}

  /** True when a company has the package. */
  uses(pkg: Pick<Package, 'id' | 'uuid'>): Promise<boolean> {
    return this.companies.exists({ where: { packageUuid: pkg.uuid } });
  }

  /** How many companies have each of these packages (by uuid); packages no company has are left out. */
  async companiesPerPackage(uuids: string[]): Promise<Map<string, number>> {
    if (!uuids.length) return new Map();
    const rows = await this.companies
      .createQueryBuilder('company')
      .select('company.package_uuid', 'packageUuid')
      .addSelect('COUNT(*)', 'count')
      .where({ packageUuid: In(uuids) })
      .groupBy('company.package_uuid')
      .getRawMany<{ packageUuid: string; count: string | number }>();
    return new Map(rows.map((r) => [r.packageUuid, Number(r.count)]));
  }
}
