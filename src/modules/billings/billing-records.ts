import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import type { Package } from '../packages/entities/package.entity';
import { Billing } from './entities/billing.entity';

/** A company's latest billing: what the companies area's admin view asks. */
@Injectable()
export class LastBillings {
  constructor(@InjectRepository(Billing) private readonly billings: Repository<Billing>) {}

  /** The company's latest billing (newest created first), or null. */
  lastOf(companyId: number): Promise<Billing | null> {
    return this.billings.findOne({ where: { companyId }, order: { createdAt: 'DESC', id: 'DESC' } });
  }
}

/** Whether billings refer to a package: what the packages area asks before deleting one. */
@Injectable()
export class BillingPackageUsage {
  constructor(@InjectRepository(Billing) private readonly billings: Repository<Billing>) {}

  /** True when a billing refers to the package. */
  uses(pkg: Pick<Package, 'id' | 'uuid'>): Promise<boolean> {
    return this.billings.exists({ where: { packageId: pkg.id } });
  }
}
