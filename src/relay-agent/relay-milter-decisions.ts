import { Injectable } from '@nestjs/common';
import { CompanyAttribution, identifiesClient } from '../modules/attribution/company-attribution.service';
import { deriveRelayStatus } from '../modules/companies/relay-status';
import { DomainSigningKeys } from '../modules/domains/domain-signing-keys';
import { refusalText } from '../modules/internal/relay-decision.service';
import type { MilterDecisions, SendingCompany } from './milter/milter-decisions';

/**
 * The milter's questions answered by the service: the company by the one attribution rule (the
 * same as the policy check's and log ingest's, from the same facts), only when SMTP AUTH or an
 * allowed network identified the client; the owners of the From: domains; the DKIM key of the
 * domain that signs.
 */
@Injectable()
export class RelayMilterDecisions implements MilterDecisions {
  constructor(
    private readonly attribution: CompanyAttribution,
    private readonly keys: DomainSigningKeys,
  ) {}

  async sendingCompany(facts: {
    relayUsername?: string;
    clientAddress?: string;
    sender?: string;
  }): Promise<SendingCompany | null> {
    const attribution = await this.attribution.attribute(facts);
    if (!attribution || !identifiesClient(attribution)) return null;
    const status = deriveRelayStatus(attribution.company, new Date());
    return {
      id: attribution.company.id,
      refusal: status === 'suspended' || status === 'no_package' ? refusalText(status) : null,
    };
  }

  ownerOf(domain: string): Promise<number | null> {
    return this.attribution.ownerOfDomain(domain);
  }

  signingKey(domain: string): Promise<{ selector: string; privateKeyPem: string } | null> {
    return this.keys.signingKey(domain);
  }
}
