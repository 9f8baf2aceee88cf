import { Injectable } from '@nestjs/common';
import { CompanyAttribution } from '../modules/attribution/company-attribution.service';
import { DomainSigningKeys } from '../modules/domains/domain-signing-keys';
import type { MilterDecisions } from './milter/milter-decisions';

/**
 * The milter's questions answered by the service: the company by the one attribution rule (the
 * same as the policy check's and log ingest's), the owners of the From: domains, and the DKIM key
 * of the domain that signs.
 */
@Injectable()
export class RelayMilterDecisions implements MilterDecisions {
  constructor(
    private readonly attribution: CompanyAttribution,
    private readonly keys: DomainSigningKeys,
  ) {}

  async companyOf(facts: {
    relayUsername?: string;
    clientAddress?: string;
    sender?: string;
  }): Promise<{ id: number } | null> {
    const company = await this.attribution.companyOf(facts);
    return company && { id: company.id };
  }

  ownerOf(domain: string): Promise<number | null> {
    return this.attribution.ownerOfDomain(domain);
  }

  signingKey(domain: string): Promise<{ selector: string; privateKeyPem: string } | null> {
    return this.keys.signingKey(domain);
  }
}
