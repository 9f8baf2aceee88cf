import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { ChangeNotices } from '../../database/change-notices';
import { CompanyRelayFacts, CompanyRelayLookup } from '../companies/company-relay-lookup';
import { CompanyStateEvents } from '../companies/company-state-events';
import { DomainEvents } from '../domains/domain-events';
import { DomainLookup } from '../domains/domain-lookup';
import { AllowedNetworks } from '../internal/allowed-networks';
import { normaliseRelayUsername, senderDomainOf } from './sender-identity';

/** How long a company's facts, a domain's owner or the allowed-IP table may be reused. */
export const ATTRIBUTION_CACHE_MS = 5_000;
/** Entries a cache may hold before it is emptied (each is at most one per company or domain). */
const MAX_CACHE_ENTRIES = 100_000;

/**
 * What is known of a message's sender. Only the SASL username and the client address are
 * identity, and only as Postfix wrote them (the policy request, the `smtpd` `client=` line, the
 * milter's macros); the sender is whatever the client gave as MAIL FROM.
 */
export interface SenderFacts {
  relayUsername?: string | null;
  clientAddress?: string | null;
  sender?: string | null;
}

interface Cached<T> {
  value: T;
  until: number;
}

/**
 * Who sent a message: the one rule (integrations.md "Who sent it", "Relay decision") for the
 * relay decision, log ingest, spam reports and the milter. The SASL username; else the one
 * company whose allowed networks hold the client address (an address several companies' networks
 * hold, as a mailbox suite's, is decided by the sender's verified domain among them); else the
 * company owning the sender's verified domain. A null sender or one without a domain is
 * attributed by the first two alone.
 *
 * Companies' facts, domains' owners and the networks table are cached for at most
 * ATTRIBUTION_CACHE_MS and forgotten at once when the companies or domains area announces a
 * change, in this process and (through ChangeNotices, caught up before each answer) in the others
 * on the same database.
 */
@Injectable()
export class CompanyAttribution implements OnModuleInit, OnModuleDestroy {
  private readonly facts = new Map<number, Cached<Promise<CompanyRelayFacts | null>>>();
  private readonly byUsername = new Map<string, Cached<Promise<number | null>>>();
  private readonly domainOwners = new Map<string, Cached<Promise<number | null>>>();
  /** The networks that may relay without SMTP authentication, by company: one entry, the table. */
  private readonly allowedNetworks = new Map<'table', Cached<Promise<AllowedNetworks>>>();
  /** Counts the company changes heard, so a read that a change overtook is not kept. */
  private companyChanges = 0;
  private readonly unsubscribe: Array<() => void> = [];

  constructor(
    private readonly companies: CompanyRelayLookup,
    private readonly companyEvents: CompanyStateEvents,
    private readonly domains: DomainLookup,
    private readonly domainEvents: DomainEvents,
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

  /** The company that sent a message with these facts, or null when the rule names none. */
  async companyOf(facts: SenderFacts): Promise<CompanyRelayFacts | null> {
    this.notices.catchUp();
    const now = Date.now();
    if (facts.relayUsername) {
      const id = await this.companyIdByUsername(normaliseRelayUsername(facts.relayUsername), now);
      return id === null ? null : this.companyFacts(id, now);
    }
    const domain = senderDomainOf(facts.sender);
    const senderDomain = domain.kind === 'domain' ? domain.name : null;
    let owner: number | null | undefined;
    if (facts.clientAddress) {
      const candidates = await this.companiesAllowing(facts.clientAddress, now);
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

  /** The facts of a company attributed earlier (a queue's, kept by its id). */
  companyById(id: number): Promise<CompanyRelayFacts | null> {
    this.notices.catchUp();
    return this.companyFacts(id, Date.now());
  }

  /** The company that verified the domain (as senderDomainOf writes it), or null. */
  ownerOfDomain(name: string): Promise<number | null> {
    this.notices.catchUp();
    return this.domainOwner(name, Date.now());
  }

  private companyIdByUsername(relayUsername: string, now: number): Promise<number | null> {
    return cached(this.byUsername, relayUsername, now, async () => {
      const changes = this.companyChanges;
      const company = await this.companies.byRelayUsername(relayUsername);
      // The facts read with the id serve the next calls too, unless a change came in meanwhile.
      const held = company && this.facts.get(company.id);
      if (company && changes === this.companyChanges && !(held && held.until > now)) {
        this.facts.set(company.id, { value: Promise.resolve(company), until: now + ATTRIBUTION_CACHE_MS });
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
  const entry = { value: load(), until: now + ATTRIBUTION_CACHE_MS };
  cache.set(key, entry);
  entry.value.catch(() => {
    if (cache.get(key) === entry) cache.delete(key);
  });
  return entry.value;
}
