import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { ChangeNotices } from '../../database/change-notices';
import { CompanyRelayFacts, CompanyRelayLookup } from '../companies/company-relay-lookup';
import { CompanyStateEvents } from '../companies/company-state-events';
import { DomainEvents } from '../domains/domain-events';
import { DomainLookup } from '../domains/domain-lookup';
import { AllowedNetworks } from '../internal/allowed-networks';
import { normaliseRelayUsername, senderDomainOf } from './sender-identity';

/** How long a company's facts, a domain's owner or the allowed-IP table may be reused. */
export const ATTRIBUTION_CACHE_MS = 5_000;
/** Entries a cache may hold; past that the least recently used one goes (each is one company or domain). */
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

/**
 * How the rule found a message's company. Only `sasl` (SMTP AUTH with the company's relay
 * credentials) and `network` (the client's address in the company's allowed networks) identify a
 * client and may let it relay; `sender_domain` (the owner of the envelope sender's verified
 * domain, which any client can claim) names a company for attribution only.
 */
export type IdentifiedBy = 'sasl' | 'network' | 'sender_domain';

export interface Attribution {
  company: CompanyRelayFacts;
  by: IdentifiedBy;
}

/** Whether an attribution identifies the client (SMTP AUTH or allowed network): the only ones that may relay. */
export function identifiesClient(attribution: Attribution): boolean {
  return attribution.by !== 'sender_domain';
}

/** A cached answer, boxed: lru-cache holds no null, and "none" (null) is an answer worth keeping. */
interface Held<T> {
  value: T;
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
 * on the same database; all of them at once when the notices' connection comes back after a loss.
 */
@Injectable()
export class CompanyAttribution implements OnModuleInit, OnModuleDestroy {
  private readonly facts = ttlCache<number, CompanyRelayFacts | null>((id) => this.companies.byId(id));
  private readonly byUsername = ttlCache<string, number | null>((username) =>
    this.loadCompanyIdByUsername(username),
  );
  private readonly domainOwners = ttlCache<string, number | null>((domain) =>
    this.domains.verifiedDomainOwner(domain),
  );
  /** The networks that may relay without SMTP authentication, by company: one entry, the table. */
  private readonly allowedNetworks = ttlCache<'table', AllowedNetworks>(() => this.loadAllowedNetworks());
  /** The table last built and the stored lists it was built from. */
  private builtNetworks?: { from: string; networks: AllowedNetworks };
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
        if (kind === 'allowed_ips') this.allowedNetworks.delete('table');
      }),
      this.domainEvents.onChange(({ name }) => this.domainOwners.delete(name)),
      // The changes made while the notices' connection was down reached nobody: forget everything.
      this.notices.onReconnect(() => this.forgetAll()),
    );
  }

  private forgetAll(): void {
    this.companyChanges++;
    for (const cache of [this.facts, this.byUsername, this.domainOwners, this.allowedNetworks]) cache.clear();
  }

  onModuleDestroy(): void {
    for (const stop of this.unsubscribe) stop();
  }

  /** The company that sent a message with these facts, or null when the rule names none. */
  async companyOf(facts: SenderFacts): Promise<CompanyRelayFacts | null> {
    return (await this.attribute(facts))?.company ?? null;
  }

  /**
   * The company the rule names and how it found it: the SASL username (an unknown one names
   * nobody, whatever else is known); else the one company whose allowed networks hold the client
   * address, or among several such companies the one owning the sender's verified domain; else
   * the owner of the sender's verified domain (`sender_domain`: attribution, never permission).
   */
  async attribute(facts: SenderFacts): Promise<Attribution | null> {
    this.notices.catchUp();
    if (facts.relayUsername) {
      const id = await held(this.byUsername, normaliseRelayUsername(facts.relayUsername));
      return this.attributed(id, 'sasl');
    }
    const domain = senderDomainOf(facts.sender);
    const senderDomain = domain.kind === 'domain' ? domain.name : null;
    let owner: number | null | undefined;
    if (facts.clientAddress) {
      const networks = await held(this.allowedNetworks, 'table');
      const candidates = networks.companiesHolding(facts.clientAddress);
      if (candidates.length === 1) return this.attributed(candidates[0], 'network');
      if (candidates.length > 1 && senderDomain) {
        owner = await held(this.domainOwners, senderDomain);
        if (owner !== null && candidates.includes(owner)) return this.attributed(owner, 'network');
      }
    }
    if (!senderDomain) return null;
    owner ??= await held(this.domainOwners, senderDomain);
    return this.attributed(owner, 'sender_domain');
  }

  private async attributed(id: number | null, by: IdentifiedBy): Promise<Attribution | null> {
    if (id === null) return null;
    const company = await held(this.facts, id);
    return company && { company, by };
  }

  /** The facts of a company attributed earlier (a queue's, kept by its id). */
  companyById(id: number): Promise<CompanyRelayFacts | null> {
    this.notices.catchUp();
    return held(this.facts, id);
  }

  /** The company that verified the domain (as senderDomainOf writes it), or null. */
  ownerOfDomain(name: string): Promise<number | null> {
    this.notices.catchUp();
    return held(this.domainOwners, name);
  }

  /**
   * The table of allowed networks, built again only when the stored lists changed: building it
   * for 10,000 companies held the event loop ~150 ms, every ATTRIBUTION_CACHE_MS, for a table
   * that rarely changes; reading the lists and comparing them costs a few milliseconds.
   */
  private async loadAllowedNetworks(): Promise<AllowedNetworks> {
    const rows = await this.companies.withAllowedIps();
    const from = rows.map((row) => `${row.id}=${row.allowedIps}`).join('\n');
    if (this.builtNetworks?.from !== from) {
      const lists = rows.map((row) => ({ id: row.id, allowedIps: storedList(row.allowedIps) }));
      this.builtNetworks = { from, networks: await AllowedNetworks.build(lists) };
    }
    return this.builtNetworks.networks;
  }

  private async loadCompanyIdByUsername(relayUsername: string): Promise<number | null> {
    const changes = this.companyChanges;
    const company = await this.companies.byRelayUsername(relayUsername);
    // The facts read with the id serve the next calls too, unless a change came in meanwhile.
    if (company && changes === this.companyChanges && !this.facts.has(company.id)) {
      this.facts.set(company.id, { value: company });
    }
    return company?.id ?? null;
  }
}

/**
 * A cache of answers by key for ATTRIBUTION_CACHE_MS, of MAX_CACHE_ENTRIES at most (least
 * recently used out first). `fetch` shares one load among the calls that come while it runs
 * (concurrent decisions used to read the same row, or the whole table of networks, once each).
 * A change that deletes the entry meanwhile aborts nothing (`ignoreFetchAbort`): the load answers
 * its callers but is not stored, so what it read before the change is not kept. A failed load
 * is not kept either.
 */
function ttlCache<K extends NonNullable<unknown>, V>(load: (key: K) => Promise<V>): LRUCache<K, Held<V>> {
  return new LRUCache<K, Held<V>>({
    // Bounded by entries counted one each rather than `max`, which allocates its arrays for
    // MAX_CACHE_ENTRIES up front (~3.4 MB a cache, in the API and in every agent).
    maxSize: MAX_CACHE_ENTRIES,
    sizeCalculation: () => 1,
    ttl: ATTRIBUTION_CACHE_MS,
    ignoreFetchAbort: true,
    fetchMethod: async (key) => ({ value: await load(key) }),
  });
}

/** The answer for `key`: cached, or loaded (once for every caller meanwhile). */
async function held<K extends NonNullable<unknown>, V>(cache: LRUCache<K, Held<V>>, key: K): Promise<V> {
  return (await cache.fetch(key))!.value;
}

/** A stored `allowed_ips` list (JSON text); a value that is not a list of strings holds nothing. */
function storedList(json: string): string[] {
  try {
    const list: unknown = JSON.parse(json);
    return Array.isArray(list) ? list.filter((entry): entry is string => typeof entry === 'string') : [];
  } catch {
    return [];
  }
}
