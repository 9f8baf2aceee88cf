import { ChangeEvents } from '../../common/events/change-events';
import type { ChangeNotices } from '../../database/change-notices';
import type { CompanyRelayFacts, CompanyRelayLookup } from '../companies/company-relay-lookup';
import type { CompanyStateChange } from '../companies/company-state-events';
import type { DomainChange } from '../domains/domain-events';
import type { DomainLookup } from '../domains/domain-lookup';
import { AllowedNetworks } from '../internal/allowed-networks';
import { CompanyAttribution } from './company-attribution.service';

/** A company's facts as the lookup answers them; `quota` tells one read from another. */
const facts = (id: number, quota = 100) =>
  ({ id, relayUsername: `relay${id}`, quota }) as unknown as CompanyRelayFacts;

/** CompanyAttribution over counting fakes of its lookups; `release` lets held loads answer. */
function setup() {
  const loads = {
    byId: [] as number[],
    byUsername: [] as string[],
    domains: [] as string[],
    networkTables: 0,
  };
  let allowedIpLists: Array<{ id: number; allowedIps: string }> = [];
  let quota = 100;
  let gate: Promise<void> | undefined;
  const companies = {
    async byId(id: number) {
      loads.byId.push(id);
      const read = facts(id, quota);
      await gate;
      if (id < 0) throw new Error('connection lost');
      return read;
    },
    byRelayUsername(username: string) {
      loads.byUsername.push(username);
      return Promise.resolve(facts(Number(username.slice(5)), quota));
    },
    withAllowedIps() {
      loads.networkTables += 1;
      return Promise.resolve(allowedIpLists);
    },
  } as unknown as CompanyRelayLookup;
  const domains = {
    verifiedDomainOwner(name: string) {
      loads.domains.push(name);
      return Promise.resolve(name === 'owned.test' ? 7 : null);
    },
  } as unknown as DomainLookup;
  const companyEvents = new ChangeEvents<CompanyStateChange>();
  const domainEvents = new ChangeEvents<DomainChange>();
  const reconnects = new Set<() => void>();
  const notices = {
    catchUp: () => undefined,
    onReconnect(handler: () => void) {
      reconnects.add(handler);
      return () => reconnects.delete(handler);
    },
  } as unknown as ChangeNotices;
  const attribution = new CompanyAttribution(companies, companyEvents, domains, domainEvents, notices);
  attribution.onModuleInit();
  return {
    attribution,
    loads,
    companyEvents,
    setQuota: (q: number) => (quota = q),
    setAllowedIpLists: (lists: typeof allowedIpLists) => (allowedIpLists = lists),
    hold() {
      let release!: () => void;
      gate = new Promise((resolve) => (release = resolve));
      return () => {
        gate = undefined;
        release();
      };
    },
    reconnect: () => reconnects.forEach((handler) => handler()),
  };
}

describe('CompanyAttribution caches (lru-cache)', () => {
  it('shares one load among concurrent callers, and answers later calls from the cache', async () => {
    const s = setup();
    const release = s.hold();
    const answers = [s.attribution.companyById(1), s.attribution.companyById(1)];
    release();
    expect(await Promise.all(answers)).toEqual([facts(1), facts(1)]);
    expect(await s.attribution.companyById(1)).toEqual(facts(1));
    expect(s.loads.byId).toEqual([1]);
  });

  it('keeps "none" as an answer too (a domain nobody verified)', async () => {
    const s = setup();
    expect(await s.attribution.ownerOfDomain('nobody.test')).toBeNull();
    expect(await s.attribution.ownerOfDomain('nobody.test')).toBeNull();
    expect(await s.attribution.ownerOfDomain('owned.test')).toBe(7);
    expect(s.loads.domains).toEqual(['nobody.test', 'owned.test']);
  });

  it('answers the callers of a load that a change overtook, but does not keep what it read', async () => {
    const s = setup();
    const release = s.hold();
    const during = s.attribution.companyById(1);
    await Promise.resolve();
    s.setQuota(10);
    s.companyEvents.emit({ companyId: 1, companyUuid: 'u1', kind: 'quota' });
    release();
    expect(await during).toEqual(facts(1, 100));
    expect(await s.attribution.companyById(1)).toEqual(facts(1, 10));
    expect(s.loads.byId).toEqual([1, 1]);
  });

  it('keeps no failed load', async () => {
    const s = setup();
    await expect(s.attribution.companyById(-1)).rejects.toThrow('connection lost');
    await expect(s.attribution.companyById(-1)).rejects.toThrow('connection lost');
    expect(s.loads.byId).toEqual([-1, -1]);
  });

  it('when full, lets the least recently used entry go, not all of them', async () => {
    // Time stands still (lru-cache reads performance.now()): filling 100,000 entries may take
    // longer than their 5 s on a loaded machine, and this is about size, not age.
    const frozen = performance.now();
    const clock = jest.spyOn(performance, 'now').mockReturnValue(frozen);
    try {
      const s = setup();
      const max = 100_000;
      for (let id = 0; id < max; id++) await s.attribution.companyById(id);
      await s.attribution.companyById(0); // used again: now the most recent
      await s.attribution.companyById(max); // one too many: company 1, the least recent, goes
      s.loads.byId.length = 0;
      await s.attribution.companyById(0);
      await s.attribution.companyById(2);
      expect(s.loads.byId).toEqual([]);
      await s.attribution.companyById(1);
      expect(s.loads.byId).toEqual([1]);
    } finally {
      clock.mockRestore();
    }
  });

  it('builds the table of allowed networks again only when the stored lists changed', async () => {
    const frozen = performance.now();
    const clock = jest.spyOn(performance, 'now').mockReturnValue(frozen);
    const holding = jest.spyOn(AllowedNetworks.prototype, 'companiesHolding');
    // lru-cache keeps the time it read until a timer of its own clears it: one turn of the loop.
    const later = async (now: number) => {
      clock.mockReturnValue(now);
      await new Promise((resolve) => setTimeout(resolve, 5));
    };
    try {
      const s = setup();
      s.setAllowedIpLists([{ id: 7, allowedIps: '["192.0.2.0/28"]' }]);
      const tables = () => new Set(holding.mock.contexts).size;
      expect((await s.attribution.companyOf({ clientAddress: '192.0.2.5' }))?.id).toBe(7);
      // The cache expired, the lists are the same: read again, the table kept.
      await later(frozen + 10_000);
      expect((await s.attribution.companyOf({ clientAddress: '192.0.2.6' }))?.id).toBe(7);
      expect(s.loads.networkTables).toBe(2);
      expect(tables()).toBe(1);
      // Expired again, a list changed: built again.
      s.setAllowedIpLists([{ id: 7, allowedIps: '["198.51.100.0/28"]' }]);
      await later(frozen + 20_000);
      expect(await s.attribution.companyOf({ clientAddress: '192.0.2.6' })).toBeNull();
      expect((await s.attribution.companyOf({ clientAddress: '198.51.100.1' }))?.id).toBe(7);
      expect(s.loads.networkTables).toBe(3);
      expect(tables()).toBe(2);
    } finally {
      holding.mockRestore();
      clock.mockRestore();
    }
  });

  it('keeps the facts read with a relay username, and forgets everything when the notices reconnect', async () => {
    const s = setup();
    expect(await s.attribution.companyOf({ relayUsername: 'relay3' })).toEqual(facts(3));
    expect(await s.attribution.companyById(3)).toEqual(facts(3));
    expect(s.loads).toMatchObject({ byUsername: ['relay3'], byId: [] });

    s.reconnect();
    expect(await s.attribution.companyOf({ relayUsername: 'relay3' })).toEqual(facts(3));
    expect(await s.attribution.ownerOfDomain('owned.test')).toBe(7);
    expect(s.loads).toMatchObject({ byUsername: ['relay3', 'relay3'], domains: ['owned.test'] });
  });
});
