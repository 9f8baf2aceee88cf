import { Injectable } from '@nestjs/common';
import type { Billing } from '../billings/entities/billing.entity';

/** The company's latest billing (newest created first), or null. */
export type LastBillingLookup = (companyId: number) => Promise<Billing | null>;

/**
 * What the billings area answers about a company's billings, registered by it when the
 * application starts. Billings imports the companies area, so this area cannot import it back;
 * it asks through here instead of reading the billings table.
 */
@Injectable()
export class CompanyBillings {
  private lastBillingLookup?: LastBillingLookup;

  setLastBillingLookup(lookup: LastBillingLookup): void {
    this.lastBillingLookup = lookup;
  }

  lastOf(companyId: number): Promise<Billing | null> {
    if (!this.lastBillingLookup) {
      throw new Error('CompanyBillings: the billings area registered no lookup');
    }
    return this.lastBillingLookup(companyId);
  }
}
