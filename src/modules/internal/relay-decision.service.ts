import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { CompanyAttribution, identifiesClient } from '../attribution/company-attribution.service';
import { senderDomainOf } from '../attribution/sender-identity';
import { deriveRelayStatus, RelayStatus } from '../companies/relay-status';
import { relayDecisions } from '../metrics/metrics';
import { SuppressionLists } from '../suppression/suppression-lists';
import { RelayDecision, RelayQuery } from './relay-decision';

/** The Postfix word and the text of each refused relay state. */
const REFUSALS: Record<Exclude<RelayStatus, 'active'>, string> = {
  suspended: 'REJECT account suspended',
  no_package: 'REJECT no active package',
  expired: 'DEFER_IF_PERMIT subscription period expired',
  quota_exceeded: 'DEFER_IF_PERMIT quota exceeded',
};

/** The text of a refused relay state (`account suspended`), as the milter refuses it too. */
export function refusalText(status: Exclude<RelayStatus, 'active'>): string {
  return reasonOf(REFUSALS[status]);
}

const UNKNOWN_ACCOUNT = 'REJECT unknown account';
const NOT_AUTHENTICATED = 'REJECT Authentication required';
const UNVERIFIED_DOMAIN = 'REJECT sender domain not verified';

/**
 * The relay decision (integrations.md "Relay decision"): which company sends (CompanyAttribution,
 * the rule log ingest uses too) and whether the client proved it (SMTP AUTH or an allowed
 * network: the sender's domain alone never lets a client relay), whether it may relay now, whether the sender is of a domain it
 * verified, and which recipients are suppressed.
 */
@Injectable()
export class RelayDecisionService {
  constructor(
    private readonly config: AppConfig,
    private readonly attribution: CompanyAttribution,
    private readonly suppression: SuppressionLists,
  ) {}

  async decide(query: RelayQuery): Promise<RelayDecision> {
    const decision = await this.decideFor(query);
    relayDecisions.inc({ action: decision.action.split(' ', 1)[0], reason: decision.reason ?? '' });
    return decision;
  }

  private async decideFor(query: RelayQuery): Promise<RelayDecision> {
    const attribution = await this.attribution.attribute(query);
    if (!attribution || !identifiesClient(attribution)) {
      // An unknown relay username is an unknown account; a client that neither authenticated nor
      // comes from an allowed network may not relay, whoever its sender's domain names.
      const unknownAccount = Boolean(query.relayUsername);
      return {
        allowed: false,
        action: unknownAccount ? UNKNOWN_ACCOUNT : NOT_AUTHENTICATED,
        status: null,
        companyUuid: attribution?.company.uuid ?? null,
        reason: unknownAccount ? reasonOf(UNKNOWN_ACCOUNT) : 'not_authenticated',
        quota: null,
        senderDomainVerified: null,
        rejectedRecipients: [],
      };
    }
    const { company } = attribution;
    const status = deriveRelayStatus(company, new Date());
    const senderDomainVerified = await this.senderDomainVerified(query.sender, company.id);
    let action = status === 'active' ? 'OK' : REFUSALS[status];
    if (action === 'OK' && senderDomainVerified === false && this.config.env.RELAY_REQUIRE_VERIFIED_DOMAIN) {
      action = UNVERIFIED_DOMAIN;
    }
    const rejectedRecipients = query.recipients?.length
      ? await this.suppression.suppressedAmong(company.id, query.recipients)
      : [];
    return {
      allowed: action === 'OK',
      action,
      status,
      companyUuid: company.uuid,
      reason: action === 'OK' ? null : reasonOf(action),
      quota: {
        limit: company.quota,
        used: company.used,
        remaining: Math.max(0, company.quota - company.used),
      },
      senderDomainVerified,
      rejectedRecipients,
    };
  }

  /**
   * Null for the null sender (bounces, exempt); otherwise whether the sender's domain is one the
   * company verified: false for every sender without such a domain (a bare local part, an
   * address literal, an empty or malformed domain, a subdomain of a verified domain).
   */
  private async senderDomainVerified(sender: string | undefined, companyId: number): Promise<boolean | null> {
    const domain = senderDomainOf(sender);
    if (domain.kind === 'null') return null;
    if (domain.kind === 'none') return false;
    return (await this.attribution.ownerOfDomain(domain.name)) === companyId;
  }
}

/** The text after the Postfix word, e.g. `account suspended`. */
function reasonOf(action: string): string {
  return action.slice(action.indexOf(' ') + 1);
}
