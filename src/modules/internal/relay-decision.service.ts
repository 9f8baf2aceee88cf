import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { ChangeNotices } from '../../database/change-notices';
import { CompanyRelayFacts, CompanyRelayLookup } from '../companies/company-relay-lookup';
import { CompanyStateEvents } from '../companies/company-state-events';
import { deriveRelayStatus, RelayStatus } from '../companies/relay-status';
import { DomainEvents } from '../domains/domain-events';
import { DomainLookup } from '../domains/domain-lookup';
import { domainOf } from '../domains/domain-name';
import { SuppressionLists } from '../suppression/suppression-lists';
import { AllowedNetworks } from './allowed-networks';
import { RelayDecision, RelayQuery } from './relay-decision';

/** How long a company's facts, a domain's owner or the allowed-IP table may be reused. */
export const RELAY_CACHE_MS = 5_000;
/** Entries a cache may hold before it is emptied (each is at most one per company or domain). */
const MAX_CACHE_ENTRIES = 100_000;

/** The Postfix word and the text of each refused relay state. */
const REFUSALS: Record<Exclude<RelayStatus, 'active'>, string> = {
  suspended: 'REJECT account suspended',
  no_package: 'REJECT no active package',
  expired: 'DEFER_IF_PERMIT subscription period expired',
  quota_exceeded: 'DEFER_IF_PERMIT quota exceeded',
};
const UNKNOWN_ACCOUNT = 'REJECT unknown account';
const UNVERIFIED_DOMAIN = 'REJECT sender domain not verified';

interface Cached<T> {
  value: T;
  until: number;
}

/**
 * The relay decision (integrations.md "Relay decision"): which company sends, whether it may
 * relay now, and which recipients are suppressed. Companies' facts and domains' owners are
 * cached for at most RELAY_CACHE_MS and forgotten at once when the companies or domains area
 * announces a change (suspension, payment, quota, usage, allowed IPs, a domain verified or lost),
 * so a suspended company is refused on the very next call in this process. The other processes
 * on the same PostgreSQL database (the Postfix policy server, the API's replicas) hear of the
 * change through ChangeNotices a few milliseconds later; on SQLite they see it at expiry, at most
 * RELAY_CACHE_MS later.
 */
@Injectable()
export class RelayDecisionService implements OnModuleInit, OnModuleDestroy {
  private readonly facts = new Map<number, Cached<Promise<CompanyRelayFacts | null>>>();
  private readonly byUsername = new Map<string, Cached<Promise<number | null>>>();
  private readonly domainOwners = new Map<string, Cached<Promise<number | null>>>();
  /** The networks that may relay without SMTP authentication, by company: one entry, the table. */
  private readonly allowedNetworks = new Map<'table', Cached<Promise<AllowedNetworks>>>();
  /** Counts the company changes heard, so a read that a change overtook is not kept. */
  private companyChanges = 0;
  private readonly unsubscribe: Array<() => void> = [];

  constructor(
    private readonly config: AppConfig,
    private readonly companies: CompanyRelayLookup,
    private readonly companyEvents: CompanyStateEvents,
    private readonly domains: DomainLookup,
    private readonly domainEvents: DomainEvents,
    private readonly suppression: SuppressionLists,
    private readonly notices: ChangeNotices,
  ) {}

  onModuleInit(): void {
    this.unsubscribe.push(
      this.companyEvents.onChange(({ companyId, kind }) => {
        this.companyChanges++;
        this.facts.delete(companyId);
        if (kind === 'allowed_ips') this.allowedNetworks.clear();
      }),
      this.domainEvents.onChange(({ name }) => this.domainOwners.delete(name)),
    );
  }

  onModuleDestroy(): void {
    for (const stop of this.unsubscribe) stop();
  }

  async decide(query: RelayQuery): Promise<RelayDecision> {
    this.notices.catchUp();
    const now = Date.now();
    const senderDomain = domainOf(query.sender);
    const company = await this.resolveCompany(query, senderDomain, now);
    if (!company) {
      return {
        allowed: false,
        action: UNKNOWN_ACCOUNT,
        status: null,
        companyUuid: null,
        reason: reasonOf(UNKNOWN_ACCOUNT),
        quota: null,
        senderDomainVerified: null,
        rejectedRecipients: [],
      };
    }
    const status = deriveRelayStatus(company, new Date(now));
    const senderDomainVerified =
      senderDomain === null ? null : (await this.domainOwner(senderDomain, now)) === company.id;
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
   * The SASL username; else the one company whose allowed networks hold the client address;
   * else the company owning the sender's verified domain. Networks shared by several companies
   * (a mailbox suite's) do not identify one: the sender's domain decides among them, and failing
   * that the address identifies none.
   */
  private async resolveCompany(
    query: RelayQuery,
    senderDomain: string | null,
    now: number,
  ): Promise<CompanyRelayFacts | null> {
    if (query.relayUsername) {
      const id = await this.companyIdByUsername(query.relayUsername, now);
      return id === null ? null : this.companyFacts(id, now);
    }
    let owner: number | null | undefined;
    if (query.clientAddress) {
      const candidates = await this.companiesAllowing(query.clientAddress, now);
      if (candidates.length === 1) return this.companyFacts(candidates[0], now);
      if (candidates.length > 1 && senderDomain) {
        owner = await this.domainOwner(senderDomain, now);
        if (owner !== null && candidates.includes(owner)) return this.companyFacts(owner, now);
      }
    }
    if (!senderDomain) return null;
    owner ??= await this.domainOwner(senderDomain, now);
    return owner === null ? null : this.companyFacts(owner, now);
  }

  private companyIdByUsername(relayUsername: string, now: number): Promise<number | null> {
    return cached(this.byUsername, relayUsername, now, async () => {
      const changes = this.companyChanges;
      const company = await this.companies.byRelayUsername(relayUsername);
      // The facts read with the id serve the next calls too, unless a change came in meanwhile.
      const held = company && this.facts.get(company.id);
      if (company && changes === this.companyChanges && !(held && held.until > now)) {
        this.facts.set(company.id, { value: Promise.resolve(company), until: now + RELAY_CACHE_MS });
      }
      return company?.id ?? null;
    });
  }

  private companyFacts(id: number, now: number): Promise<CompanyRelayFacts | null> {
    return cached(this.facts, id, now, () => this.companies.byId(id));
  }

  private domainOwner(domain: string, now: number): Promise<number | null> {
    return cached(this.domainOwners, domain, now, () => this.domains.verifiedDomainOwner(domain));
  }

  private async companiesAllowing(clientAddress: string, now: number): Promise<number[]> {
    const table = await cached(
      this.allowedNetworks,
      'table',
      now,
      async () => new AllowedNetworks(await this.companies.withAllowedIps()),
    );
    return table.companiesHolding(clientAddress);
  }
}

/**
 * The value of `key` while it is fresh, else a new load of it, cached at once: the calls that
 * come while it runs share it (concurrent decisions used to read the same row, or the whole
 * table of networks, once each), and a change that deletes the entry meanwhile leaves the load
 * to its callers only, instead of the load storing what it read before the change. A failed load
 * is not kept.
 */
function cached<K, V>(
  cache: Map<K, Cached<Promise<V>>>,
  key: K,
  now: number,
  load: () => Promise<V>,
): Promise<V> {
  const hit = cache.get(key);
  if (hit && hit.until > now) return hit.value;
  if (cache.size >= MAX_CACHE_ENTRIES) cache.clear();
  const entry = { value: load(), until: now + RELAY_CACHE_MS };
  cache.set(key, entry);
  entry.value.catch(() => {
    if (cache.get(key) === entry) cache.delete(key);
  });
  return entry.value;
}

/** The text after the Postfix word, e.g. `account suspended`. */
function reasonOf(action: string): string {
  return action.slice(action.indexOf(' ') + 1);
}
