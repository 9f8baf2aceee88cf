import { Injectable } from '@nestjs/common';
import type { Package } from './entities/package.entity';

/** Whether rows of another area refer to a package. */
export type PackageUsageCheck = (pkg: Pick<Package, 'id' | 'uuid'>) => Promise<boolean>;

/** How many companies have each of these packages (by uuid). */
export type CompaniesPerPackage = (uuids: string[]) => Promise<Map<string, number>>;

/**
 * What the areas that refer to packages (companies, billings) answer about them, registered by
 * those areas when the application starts. They import the packages area, so it cannot import
 * them back; it asks them through here instead of reading their tables.
 */
@Injectable()
export class PackageReferences {
  private readonly usageChecks: PackageUsageCheck[] = [];
  private companiesCounter?: CompaniesPerPackage;

  addUsageCheck(check: PackageUsageCheck): void {
    this.usageChecks.push(check);
  }

  setCompaniesCounter(counter: CompaniesPerPackage): void {
    this.companiesCounter = counter;
  }

  /** True when any registered area refers to the package. */
  async inUse(pkg: Pick<Package, 'id' | 'uuid'>): Promise<boolean> {
    for (const check of this.usageChecks) {
      if (await check(pkg)) return true;
    }
    return false;
  }

  async companiesPerPackage(uuids: string[]): Promise<Map<string, number>> {
    if (!uuids.length) return new Map();
    if (!this.companiesCounter)
      throw new Error('PackageReferences: the companies area registered no counter');
    return this.companiesCounter(uuids);
  }
}
