import { DatabaseRuntime } from '../src/database/database-runtime';
import { PgClient } from '../src/database/postgres/pg-client';
import { SqliteRuntime } from '../src/database/sqlite/sqlite-runtime';
import { TransactionService } from '../src/database/transaction.service';
import { CompanyRelayLookup } from '../src/modules/companies/company-relay-lookup';
import { Company } from '../src/modules/companies/entities/company.entity';
import { DomainLookup } from '../src/modules/domains/domain-lookup';
import { createPaidCompany, storeDomain } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';
import { latch, until } from './support/until';

/**
 * The relay decision's lookups of a company (by id, by relay username) and of a verified domain's
 * owner: the facts TypeORM itself reads, each caller its own answer, and on PostgreSQL the lookups
 * of concurrent decisions in one statement (a round trip each cost the agent most of a decision).
 */
describe('Relay decision lookups', () => {
  let t: TestApp;
  let companies: Company[];

  beforeAll(async () => {
    t = await createTestApp();
    companies = [await createPaidCompany(t), await createPaidCompany(t), await createPaidCompany(t)];
    await storeDomain(t, companies[0].id, 'lookups-a.test');
    await storeDomain(t, companies[1].id, 'lookups-b.test');
    await storeDomain(t, companies[2].id, 'lookups-pending.test', 'pending');
  });
  afterAll(async () => {
    await t.close();
  });

  /** What TypeORM reads of the company, in the facts' shape. */
  const factsOf = async (id: number) => {
    const c = await t.dataSource.getRepository(Company).findOneByOrFail({ id });
    const { uuid, relayUsername, status, packageUuid, periodEnd, quota, used } = c;
    return { id, uuid, relayUsername, status, packageUuid, periodEnd, quota, used };
  };

  it('reads a company by id and by relay username exactly as TypeORM does, null when none', async () => {
    const lookup = t.app.get(CompanyRelayLookup);
    const expected = await factsOf(companies[0].id);
    expect(expected.periodEnd).toBeInstanceOf(Date);
    expect(await lookup.byId(companies[0].id)).toEqual(expected);
    expect(await lookup.byRelayUsername(companies[0].relayUsername)).toEqual(expected);
    expect(await lookup.byId(2_000_000_000)).toBeNull();
    expect(await lookup.byRelayUsername('r-nobody')).toBeNull();
  });

  it('answers concurrent lookups each with its own company or owner', async () => {
    const lookup = t.app.get(CompanyRelayLookup);
    const domains = t.app.get(DomainLookup);
    const [byId, byName, unknown, owners] = await Promise.all([
      Promise.all(companies.map((c) => lookup.byId(c.id))),
      Promise.all([...companies].reverse().map((c) => lookup.byRelayUsername(c.relayUsername))),
      lookup.byRelayUsername('r-unknown'),
      Promise.all(
        ['lookups-a.test', 'lookups-b.test', 'lookups-pending.test', 'nowhere.test', 'lookups-a.test'].map(
          (name) => domains.verifiedDomainOwner(name),
        ),
      ),
    ]);
    expect(byId.map((c) => c?.id)).toEqual(companies.map((c) => c.id));
    expect(byName.map((c) => c?.id)).toEqual([...companies].reverse().map((c) => c.id));
    expect(unknown).toBeNull();
    expect(owners).toEqual([companies[0].id, companies[1].id, null, null, companies[0].id]);
  });

  it('reads what is in the database when the lookup starts, not an earlier answer', async () => {
    const lookup = t.app.get(CompanyRelayLookup);
    await t.dataSource.getRepository(Company).update({ id: companies[2].id }, { used: 42 });
    expect((await lookup.byId(companies[2].id))?.used).toBe(42);
    await t.dataSource.getRepository(Company).update({ id: companies[2].id }, { used: 43 });
    expect((await lookup.byId(companies[2].id))?.used).toBe(43);
  });

  it("answers while another request's transaction is open: PostgreSQL with what is committed, SQLite once that transaction ends, ahead of the one queued behind it", async () => {
    const lookup = t.app.get(CompanyRelayLookup);
    const transactions = t.app.get(TransactionService);
    const runtime = t.app.get(DatabaseRuntime);
    const company = await createPaidCompany(t);
    const held = latch();
    const changed = latch();
    // A log batch's unit, say: it counts the company's mail, and another batch waits behind it.
    const open = transactions.run(async (em) => {
      await em.getRepository(Company).update({ id: company.id }, { used: 7 });
      changed.open();
      await held.wait;
    });
    await changed.wait;
    const queued = transactions.run((em) =>
      em.getRepository(Company).update({ id: company.id }, { used: 9 }),
    );
    let during: { used: number } | null | undefined;
    void lookup.byId(company.id).then((facts) => (during = facts));
    if (runtime instanceof SqliteRuntime) {
      // One connection: the read waits for the open transaction, beside the one queued behind it.
      await until(() => runtime.gate.waiting >= 2, 'the read and the second transaction wait');
      expect(during).toBeUndefined();
      held.open();
      await until(() => during !== undefined, 'the lookup answered once the transaction ended');
      expect(during?.used).toBe(7);
    } else {
      await until(() => during !== undefined, 'the lookup answered while the transaction was open');
      expect(during?.used).toBe(0);
      held.open();
    }
    await Promise.all([open, queued]);
    expect((await lookup.byId(company.id))?.used).toBe(9);
  });

  it('on PostgreSQL, reads the companies and domain owners of 50 concurrent decisions in one statement each', async () => {
    if (t.dataSource.options.type !== 'postgres') return;
    const lookup = t.app.get(CompanyRelayLookup);
    const domains = t.app.get(DomainLookup);
    const statements: string[] = [];
    const counted = countQueries(statements);
    try {
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          Promise.all([
            lookup.byRelayUsername(companies[i % 3].relayUsername),
            lookup.byId(companies[i % 3].id),
            domains.verifiedDomainOwner(i % 2 ? 'lookups-a.test' : `n${i}.test`),
          ]),
        ),
      );
      expect(answers.map(([c]) => c?.id)).toEqual(answers.map((_, i) => companies[i % 3].id));
      expect(answers.map(([, c]) => c?.id)).toEqual(answers.map((_, i) => companies[i % 3].id));
      expect(answers.map(([, , owner]) => owner)).toEqual(
        answers.map((_, i) => (i % 2 ? companies[0].id : null)),
      );
    } finally {
      counted.restore();
    }
    expect(statements.filter((s) => /FROM companies/.test(s))).toHaveLength(2);
    expect(statements.filter((s) => /FROM domains/.test(s))).toHaveLength(1);
  });
});

/** Records the text of every statement the pool's clients send until restore(). */
function countQueries(into: string[]): { restore(): void } {
  const prototype = PgClient.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const own = Object.getOwnPropertyDescriptor(prototype, 'query')!;
  prototype.query = function (this: PgClient, ...args: unknown[]) {
    const config = args[0] as string | { text?: string } | null;
    into.push(typeof config === 'string' ? config : (config?.text ?? ''));
    return (own.value as (...a: unknown[]) => unknown).apply(this, args);
  };
  return { restore: () => Object.defineProperty(prototype, 'query', own) };
}
