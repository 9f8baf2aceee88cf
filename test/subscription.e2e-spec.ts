import { BillingPaymentsService } from '../src/modules/billings/billing-payments.service';
import { Billing } from '../src/modules/billings/entities/billing.entity';
import { Company } from '../src/modules/companies/entities/company.entity';
import { CompanyStateService } from '../src/modules/companies/company-state.service';
import { Notification } from '../src/modules/notifications/entities/notification.entity';
import { Package } from '../src/modules/packages/entities/package.entity';
import { createActiveUser } from './support/factories';
import { insertBilling } from './support/billing-fixtures';
import { createTestApp, TestApp } from './support/test-app';

const DAY = 86_400_000;

describe('Subscription and quota rules (service level)', () => {
  let t: TestApp;
  let packages: { starter: Package; pro: Package };

  beforeAll(async () => {
    t = await createTestApp();
    const repo = t.dataSource.getRepository(Package);
    packages = {
      starter: await repo.save(
        repo.create({ name: 'Starter', quota: 100, price: 150000, currency: 'IDR', durationDays: 30 }),
      ),
      pro: await repo.save(
        repo.create({ name: 'Pro', quota: 1000, price: 900000, currency: 'IDR', durationDays: 30 }),
      ),
    };
  });
  afterAll(async () => {
    await t.close();
  });

  async function newCompany(): Promise<Company> {
    const user = await createActiveUser(t);
    return t.dataSource.getRepository(Company).findOneByOrFail({ uuid: user.companyUuid });
  }

  function pendingBilling(company: Company, pkg: Package): Promise<Billing> {
    return insertBilling(t, company.id, pkg, { expiresAt: new Date(Date.now() + DAY) });
  }

  const reload = (company: Company) =>
    t.dataSource.getRepository(Company).findOneByOrFail({ id: company.id });

  it('a paid billing starts a period with the package quota; paying the same package again extends it', async () => {
    const company = await newCompany();
    const payments = t.app.get(BillingPaymentsService);
    const paidAt = new Date();
    const first = await payments.markPaid((await pendingBilling(company, packages.starter)).id, {
      event: 'gateway_paid',
      paidAt,
    });
    expect(first).toMatchObject({ outcome: 'applied', period: 'started' });
    let c = await reload(company);
    expect(c).toMatchObject({ packageUuid: packages.starter.uuid, quota: 100, used: 0 });
    expect(c.periodStart?.getTime()).toBe(paidAt.getTime());
    expect(c.periodEnd?.getTime()).toBe(paidAt.getTime() + 30 * DAY);

    await t.app.get(CompanyStateService).recordUsage(company.id, 7);
    const second = await payments.markPaid((await pendingBilling(company, packages.starter)).id, {
      event: 'approve',
      paidAt: new Date(paidAt.getTime() + 1000),
    });
    expect(second).toMatchObject({ outcome: 'applied', period: 'extended' });
    c = await reload(company);
    expect(c.used).toBe(7);
    expect(c.periodEnd?.getTime()).toBe(paidAt.getTime() + 60 * DAY);

    const other = await payments.markPaid((await pendingBilling(company, packages.pro)).id, {
      event: 'approve',
      paidAt: new Date(),
    });
    expect(other).toMatchObject({ outcome: 'applied', period: 'started' });
    c = await reload(company);
    expect(c).toMatchObject({ packageUuid: packages.pro.uuid, quota: 1000, used: 0 });
  });

  it('20 concurrent PAID applications of one billing extend the period once', async () => {
    const company = await newCompany();
    const payments = t.app.get(BillingPaymentsService);
    await payments.markPaid((await pendingBilling(company, packages.starter)).id, {
      event: 'gateway_paid',
      paidAt: new Date(),
    });
    const before = (await reload(company)).periodEnd!.getTime();

    const billing = await pendingBilling(company, packages.starter);
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        payments.markPaid(billing.id, { event: 'gateway_paid', paidAt: new Date() }),
      ),
    );
    expect(results.filter((r) => r.outcome === 'applied')).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'not_applicable')).toHaveLength(19);
    expect((await reload(company)).periodEnd!.getTime()).toBe(before + 30 * DAY);
    const paidNotices = await t.dataSource
      .getRepository(Notification)
      .count({ where: { type: 'billing.paid' } });
    expect(paidNotices).toBeGreaterThanOrEqual(2);
  });

  it('counts usage atomically under concurrency and warns at 80 % and 100 % once per period', async () => {
    const company = await newCompany();
    const billing = await pendingBilling(company, packages.starter);
    await t.app
      .get(BillingPaymentsService)
      .markPaid(billing.id, { event: 'gateway_paid', paidAt: new Date() });
    const subscriptions = t.app.get(CompanyStateService);

    await Promise.all(Array.from({ length: 50 }, () => subscriptions.recordUsage(company.id, 2)));
    let c = await reload(company);
    expect(c.used).toBe(100);
    expect(c.quotaWarnedAt80).not.toBeNull();
    expect(c.quotaWarnedAt100).not.toBeNull();

    await subscriptions.recordUsage(company.id, 5);
    c = await reload(company);
    expect(c.used).toBe(105);

    const owner = await t.dataSource.query(`SELECT id FROM users WHERE company_id = ${company.id}`);
    const notes = await t.dataSource.getRepository(Notification).find({ where: { userId: owner[0].id } });
    expect(notes.filter((n) => n.type === 'quota.80')).toHaveLength(1);
    expect(notes.filter((n) => n.type === 'quota.100')).toHaveLength(1);

    const days: Array<{ day: string; count: number }> = await t.dataSource.query(
      `SELECT day, count FROM company_usage_days WHERE company_id = ${company.id}`,
    );
    expect(days).toEqual([{ day: new Date().toISOString().slice(0, 10), count: 105 }]);
  });

  it('expires only a pending billing', async () => {
    const company = await newCompany();
    const payments = t.app.get(BillingPaymentsService);
    const pending = await pendingBilling(company, packages.starter);
    expect(await payments.expire(pending.id)).toBe(true);
    expect(await payments.expire(pending.id)).toBe(false);
    const paid = await pendingBilling(company, packages.starter);
    await payments.markPaid(paid.id, { event: 'gateway_paid', paidAt: new Date() });
    expect(await payments.expire(paid.id)).toBe(false);
    expect((await t.dataSource.getRepository(Billing).findOneByOrFail({ id: paid.id })).status).toBe('paid');
  });
});
