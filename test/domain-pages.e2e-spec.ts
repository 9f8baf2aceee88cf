import { Repository } from 'typeorm';
import { skipFor } from '../src/common/pagination/page';
import { DatabaseRuntime } from '../src/database/database-runtime';
import { PostgresHotRead } from '../src/database/postgres/postgres-runtime';
import { SqliteHotRead } from '../src/database/sqlite/sqlite-runtime';
import { Company } from '../src/modules/companies/entities/company.entity';
import { DomainsService } from '../src/modules/domains/domains.service';
import { ListDomainsQueryDto } from '../src/modules/domains/dto/domain-requests.dto';
import { DnsRecord, Domain, DomainStatus } from '../src/modules/domains/entities/domain.entity';
import { bearer, createActiveUser } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

type Owner = Awaited<ReturnType<typeof createActiveUser>>;

/** A page asked for, and the company it is asked for (by index). */
interface Ask {
  company: number;
  status?: DomainStatus;
  page: number;
  limit: number;
}

const record = (host: string, checkedAt: string | null): DnsRecord => ({
  purpose: 'spf',
  type: 'TXT',
  host,
  value: 'v=spf1 include:_spf.relay.test ~all',
  required: true,
  status: checkedAt ? 'ok' : 'unchecked',
  detail: checkedAt ? 'found' : '',
  checkedAt,
});

/**
 * GET /api/v1/domains when many companies ask at once: on PostgreSQL the pages asked for at the
 * same moment share one statement (CompanyDomainPages); each request must still get exactly its
 * own company's page and total, read as TypeORM reads a domain (dates, the JSON records).
 */
describe('GET /api/v1/domains, many companies at once', () => {
  let t: TestApp;
  let domains: Repository<Domain>;
  let owners: Owner[];
  let companies: Company[];
  /** Each company's read API key. */
  let keys: string[];
  /** What was stored, by company. */
  const stored: Domain[][] = [];
  /** Each stored domain's records, as given (an insert may leave the entity's as the JSON it wrote). */
  const storedRecords = new Map<string, DnsRecord[]>();

  /** The page as the statement must answer it, computed from what was stored. */
  function expected({ company, status, page, limit }: Ask) {
    const matching = stored[company]
      .filter((d) => status === undefined || d.status === status)
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id - a.id);
    const offset = skipFor(page, limit);
    return {
      uuids: matching.slice(offset, offset + limit).map((d) => d.uuid),
      meta: { page, limit, totalItems: matching.length, totalPages: Math.ceil(matching.length / limit) },
    };
  }

  beforeAll(async () => {
    t = await createTestApp();
    domains = t.dataSource.getRepository(Domain);
    owners = await Promise.all([createActiveUser(t), createActiveUser(t), createActiveUser(t)]);
    companies = await Promise.all(
      owners.map((o) => t.dataSource.getRepository(Company).findOneByOrFail({ uuid: o.companyUuid })),
    );
    // Company 0: seven domains of every status, two of them created in the same millisecond (the
    // id breaks the tie); company 1: three; company 2: none.
    const statuses: DomainStatus[] = [
      'verified',
      'pending',
      'failed',
      'verified',
      'pending',
      'verified',
      'failed',
    ];
    const plan = [statuses, statuses.slice(0, 3), []];
    for (const [c, list] of plan.entries()) {
      stored[c] = [];
      for (const [n, status] of list.entries()) {
        const createdAt = new Date(Date.UTC(2026, 0, 10 - (n === 4 ? 3 : n), 8, 30, 15, 123 + c));
        const checked = status === 'pending' ? null : new Date(createdAt.getTime() + 3_600_123);
        const name = `d${n}.company${c}.test`;
        const records = [record(name, checked?.toISOString() ?? null), record(`rp.${name}`, null)];
        const domain = domains.create({
          companyId: companies[c].id,
          name,
          status,
          verificationToken: `token-${c}-${n}`,
          dkimSelector: 'rs202601',
          dkimPublicKey: `public-${c}-${n}`,
          dkimPrivateKey: 'private',
          records,
          lastCheckedAt: checked,
          verifiedAt: status === 'verified' ? checked : null,
          createdAt,
          updatedAt: new Date(createdAt.getTime() + 7_000),
        });
        await domains.insert(domain);
        stored[c].push(domain);
        storedRecords.set(domain.uuid, records);
      }
    }
    keys = [];
    for (const owner of owners) {
      const res = await t
        .http()
        .post('/api/v1/api-keys')
        .set(...bearer(owner.accessToken))
        .send({ name: 'pages', scope: 'read' })
        .expect(201);
      keys.push(res.body.data.key);
    }
  });
  afterAll(async () => {
    await t.close();
  });

  /** Every company, with and without each status, on pages before, at and past the end. */
  const asks: Ask[] = [];
  for (const company of [0, 1, 2])
    for (const status of [undefined, 'verified', 'pending', 'failed'] as const)
      for (const [page, limit] of [
        [1, 20],
        [1, 2],
        [2, 2],
        [3, 1],
        [5, 2],
      ])
        asks.push({ company, status, page, limit });

  it('answers concurrent requests of different companies, statuses and pages each with its own page and total', async () => {
    // A domain as the one-domain route reads it (through TypeORM's query builder).
    const views = new Map<string, unknown>();
    for (const domain of stored.flat()) {
      const res = await t
        .http()
        .get(`/api/v1/domains/${domain.uuid}`)
        .set(...bearer(owners[stored.findIndex((list) => list.includes(domain))].accessToken))
        .expect(200);
      views.set(domain.uuid, res.body.data);
    }

    const answers = await Promise.all(
      asks.map(async (ask, n) => {
        const query = new URLSearchParams({ page: String(ask.page), limit: String(ask.limit) });
        if (ask.status) query.set('status', ask.status);
        // Most with the company's API key, every third with its owner's access token.
        const credential = n % 3 === 2 ? owners[ask.company].accessToken : keys[ask.company];
        const res = await t
          .http()
          .get(`/api/v1/domains?${query.toString()}`)
          .set(...bearer(credential));
        return {
          status: res.status,
          body: res.body as { data: { items: Array<{ uuid: string }>; meta: unknown } },
        };
      }),
    );

    for (const [n, ask] of asks.entries()) {
      const { uuids, meta } = expected(ask);
      const { status, body } = answers[n];
      expect({ ask, status, meta: body.data.meta }).toEqual({ ask, status: 200, meta });
      expect({ ask, uuids: body.data.items.map((d) => d.uuid) }).toEqual({ ask, uuids });
      expect(body.data.items).toEqual(uuids.map((uuid) => views.get(uuid)));
    }
    // The reads are not all empty: the pages above hold every domain stored.
    expect(new Set(answers.flatMap((a) => a.body.data.items.map((d) => d.uuid))).size).toBe(
      stored.flat().length,
    );
    // Dates and the JSON records as stored.
    const first = stored[0][0];
    expect(views.get(first.uuid)).toMatchObject({
      companyUuid: companies[0].uuid,
      records: storedRecords.get(first.uuid),
      lastCheckedAt: first.lastCheckedAt!.toISOString(),
      verifiedAt: first.verifiedAt!.toISOString(),
      createdAt: first.createdAt.toISOString(),
      updatedAt: first.updatedAt.toISOString(),
    });
  });

  it('shares one statement among the pages asked for at the same moment on PostgreSQL; on SQLite reads each alone', async () => {
    const service = t.app.get(DomainsService);
    const isPostgres = t.app.get(DatabaseRuntime).isPostgres;
    const reads = jest.spyOn((isPostgres ? PostgresHotRead : SqliteHotRead).prototype, 'all');
    try {
      const pages = await Promise.all(
        asks.map(({ company, status, page, limit }) =>
          service.listOfCompany(
            companies[company],
            Object.assign(new ListDomainsQueryDto(), { status, page, limit }),
          ),
        ),
      );
      for (const [n, ask] of asks.entries()) {
        const { uuids, meta } = expected(ask);
        expect({ ask, uuids: pages[n].items.map((d) => d.uuid), meta: pages[n].meta }).toEqual({
          ask,
          uuids,
          meta,
        });
      }
      // This area's statements (the ones named for the domains of companies), not what else runs meanwhile.
      const statements = reads.mock.calls
        .filter((_, n) =>
          (reads.mock.contexts[n] as unknown as { name: string }).name.startsWith('domains_of_compan'),
        )
        .map(([params]) => params);
      if (isPostgres) {
        // One statement, given each call's company, status, limit and offset in the calls' order.
        expect(statements).toEqual([
          [
            asks.map((a) => companies[a.company].id),
            asks.map((a) => a.status ?? null),
            asks.map((a) => a.limit),
            asks.map((a) => skipFor(a.page, a.limit)),
          ],
        ]);
      } else {
        // A page, and a count for each page past the end.
        const pastEnd = asks.filter((a) => expected(a).uuids.length === 0).length;
        expect(statements).toHaveLength(asks.length + pastEnd);
      }
    } finally {
      reads.mockRestore();
    }
  });
});
