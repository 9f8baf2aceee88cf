import { randomUUID } from 'node:crypto';
import { Company } from '../src/modules/companies/entities/company.entity';
import { deriveRelayStatus, RelayStatus, relayStatusSql } from '../src/modules/companies/relay-status';
import { createActiveUser } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const NOW = new Date('2026-11-22T08:00:00.000Z');
const ms = (offset: number) => new Date(NOW.getTime() + offset);
const DAY = 86_400_000;

type Facts = Pick<Company, 'status' | 'packageUuid' | 'periodEnd' | 'quota' | 'used'>;
const paid: Facts = {
  status: 'active',
  packageUuid: randomUUID(),
  periodEnd: ms(30 * DAY),
  quota: 100,
  used: 10,
};

/** The relay state computed by the database (the list filter) and by TypeScript (each item) must agree. */
describe('relay status: the SQL expression and deriveRelayStatus agree on the real database', () => {
  let t: TestApp;
  let company: Company;

  beforeAll(async () => {
    t = await createTestApp();
    const user = await createActiveUser(t);
    company = await t.dataSource.getRepository(Company).findOneByOrFail({ uuid: user.companyUuid });
  });
  afterAll(async () => {
    await t.close();
  });

  const cases: Array<[string, Facts, RelayStatus]> = [
    [
      'suspended wins over everything',
      { ...paid, status: 'suspended', packageUuid: null, periodEnd: null },
      'suspended',
    ],
    [
      'suspended wins over expiry and quota',
      { ...paid, status: 'suspended', periodEnd: ms(-DAY), used: 500 },
      'suspended',
    ],
    ['never paid', { ...paid, packageUuid: null, periodEnd: null }, 'no_package'],
    ['a package without a period', { ...paid, periodEnd: null }, 'no_package'],
    ['a period without a package', { ...paid, packageUuid: null }, 'no_package'],
    ['no package wins over quota', { ...paid, packageUuid: null, used: 500 }, 'no_package'],
    ['period ended exactly now', { ...paid, periodEnd: NOW }, 'expired'],
    ['period ended a millisecond ago', { ...paid, periodEnd: ms(-1) }, 'expired'],
    ['period ends in a millisecond', { ...paid, periodEnd: ms(1) }, 'active'],
    ['expired wins over quota', { ...paid, periodEnd: ms(-DAY), used: 500 }, 'expired'],
    ['used reached quota', { ...paid, used: 100 }, 'quota_exceeded'],
    ['used beyond quota', { ...paid, used: 101 }, 'quota_exceeded'],
    ['a quota of zero', { ...paid, quota: 0, used: 0 }, 'quota_exceeded'],
    ['one message left', { ...paid, used: 99 }, 'active'],
    ['otherwise active', paid, 'active'],
  ];

  it.each(cases)('%s', async (_name, facts, expected) => {
    const repo = t.dataSource.getRepository(Company);
    await repo.update({ id: company.id }, facts);
    const row = await repo
      .createQueryBuilder('company')
      .select(relayStatusSql('company'), 'status')
      .where('company.id = :id', { id: company.id })
      .setParameters({ now: NOW })
      .getRawOne<{ status: string }>();
    const loaded = await repo.findOneByOrFail({ id: company.id });
    expect({ sql: row?.status, ts: deriveRelayStatus(loaded, NOW) }).toEqual({ sql: expected, ts: expected });
  });

  it('the expression is one CASE with a WHEN per rule, in the order of the rules', () => {
    const whens = [...relayStatusSql('c').matchAll(/THEN '(\w+)'/g)].map((m) => m[1]);
    expect(whens).toEqual(['suspended', 'no_package', 'expired', 'quota_exceeded']);
    expect(relayStatusSql('c')).toMatch(/ELSE 'active'\s*END$/);
  });
});
