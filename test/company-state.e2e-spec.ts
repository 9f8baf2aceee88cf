import { BillingPaymentsService } from '../src/modules/billings/billing-payments.service';
import { CompanyStateChange, CompanyStateEvents } from '../src/modules/companies/company-state-events';
import { CompanyStateService } from '../src/modules/companies/company-state.service';
import { CompanyAuditEvent } from '../src/modules/companies/entities/company-audit-event.entity';
import { Company } from '../src/modules/companies/entities/company.entity';
import { Notification } from '../src/modules/notifications/entities/notification.entity';
import { User } from '../src/modules/users/entities/user.entity';
import { TransactionService } from '../src/database/transaction.service';
import { createPackage, insertBilling } from './support/billing-fixtures';
import { bearer, createActiveUser, createAdmin, CreatedAdmin, RegisteredUser } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const API_KEY = 'internal-api-key-for-tests-0123456789abcdef';
const THRESHOLD = 2;
const BASE = '/api/v1/admins/companies';

/**
 * Every change of a company's state goes through CompanyStateService: one audit row, one
 * announcement after the commit, one CompanyStateEvents change after the commit and none when
 * the transaction rolls back.
 */
describe('Company state: one writer, one change event after commit', () => {
  let t: TestApp;
  let admin: CreatedAdmin;
  let changes: CompanyStateChange[];
  let stop: () => void;

  beforeAll(async () => {
    t = await createTestApp({
      env: { INTERNAL_API_KEY: API_KEY, SPAM_SUSPEND_THRESHOLD: String(THRESHOLD) },
    });
    admin = await createAdmin(t, 'superAdmin');
    stop = t.app.get(CompanyStateEvents).onChange((c) => changes.push(c));
  });
  beforeEach(() => {
    changes = [];
  });
  afterAll(async () => {
    stop();
    await t.close();
  });

  async function companyOf(user: RegisteredUser): Promise<Company> {
    return t.dataSource.getRepository(Company).findOneByOrFail({ uuid: user.companyUuid });
  }

  const kindsOf = (company: Company) => changes.filter((c) => c.companyId === company.id).map((c) => c.kind);

  const patch = (uuid: string, body: object) =>
    t
      .http()
      .patch(`${BASE}/${uuid}`)
      .set(...bearer(admin.accessToken))
      .send(body);

  /** The suspension as its users see it: one notification, one e-mail, one audit row. */
  async function expectSuspendedOnce(user: RegisteredUser, company: Company): Promise<void> {
    const owner = await t.dataSource.getRepository(User).findOneByOrFail({ uuid: user.userUuid });
    // Every e-mail the suspension sends has been sent: exactly one.
    await t.settle();
    expect(t.smtp.count(user.email, /suspended/i)).toBe(1);
    expect(
      await t.dataSource
        .getRepository(Notification)
        .countBy({ userId: owner.id, type: 'company.suspended' as never }),
    ).toBe(1);
    const audit = await t.dataSource
      .getRepository(CompanyAuditEvent)
      .findBy({ companyId: company.id, action: 'status.changed' });
    expect(audit).toHaveLength(1);
    expect(audit[0].detail).toMatchObject({ from: 'active', to: 'suspended' });
    expect(kindsOf(company)).toEqual(['suspended']);
    expect(changes.find((c) => c.companyId === company.id)).toEqual({
      companyId: company.id,
      companyUuid: company.uuid,
      kind: 'suspended',
    });
  }

  it('an admin PATCH suspends once: one audit row, one announcement, one suspended event', async () => {
    const user = await createActiveUser(t);
    const company = await companyOf(user);
    await patch(user.companyUuid, { status: 'suspended', suspendedReason: 'Abuse' }).expect(200);
    await expectSuspendedOnce(user, company);

    changes = [];
    await patch(user.companyUuid, { status: 'active' }).expect(200);
    expect(kindsOf(company)).toEqual(['resumed']);
  });

  it('the spam threshold suspends once: one audit row, one announcement, one suspended event', async () => {
    const user = await createActiveUser(t);
    const company = await companyOf(user);
    for (let i = 0; i < THRESHOLD + 1; i++) {
      await t
        .http()
        .post('/api/v1/spamming-mail')
        .set('x-api-key', API_KEY)
        .send({ companyUuid: company.uuid })
        .expect(201);
    }
    await expectSuspendedOnce(user, company);
    expect(
      (await t.dataSource.getRepository(CompanyAuditEvent).findOneByOrFail({ companyId: company.id }))
        .adminUuid,
    ).toBeNull();
  });

  it('a change rolled back emits nothing, writes nothing and announces nothing', async () => {
    const user = await createActiveUser(t);
    const company = await companyOf(user);
    // The suspension is applied first, then periodEnd is refused (no package): the whole PATCH rolls back.
    await patch(user.companyUuid, {
      status: 'suspended',
      quota: 10,
      periodEnd: new Date(Date.now() + 86_400_000).toISOString(),
    }).expect(409);
    await expect(
      t.app.get(TransactionService).run(async (em) => {
        const locked = await t.app.get(CompanyStateService).lock(em, { id: company.id });
        await t.app.get(CompanyStateService).overrideQuota(em, locked, 77, admin.uuid);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await t.settle();
    expect(kindsOf(company)).toEqual([]);
    expect(await companyOf(user)).toMatchObject({ status: 'active', quota: company.quota });
    expect(await t.dataSource.getRepository(CompanyAuditEvent).countBy({ companyId: company.id })).toBe(0);
    expect(t.smtp.count(user.email, /suspended/i)).toBe(0);
  });

  it('a payment emits payment; a quota override emits quota; a period extension emits period', async () => {
    const user = await createActiveUser(t);
    const company = await companyOf(user);
    const pkg = await createPackage(t, { quota: 500 });
    const billing = await insertBilling(t, company.id, pkg);
    const paid = await t.app
      .get(BillingPaymentsService)
      .markPaid(billing.id, { event: 'gateway_paid', paidAt: new Date() });
    expect(paid).toMatchObject({ outcome: 'applied', period: 'started' });
    expect(kindsOf(company)).toEqual(['payment']);
    expect(await companyOf(user)).toMatchObject({ quota: 500, packageUuid: pkg.uuid });

    changes = [];
    await patch(user.companyUuid, { quota: 900 }).expect(200);
    expect(kindsOf(company)).toEqual(['quota']);

    changes = [];
    await patch(user.companyUuid, { quota: 900 }).expect(200);
    expect(kindsOf(company)).toEqual([]);

    changes = [];
    const periodEnd = new Date(Date.now() + 90 * 86_400_000).toISOString();
    await patch(user.companyUuid, { periodEnd }).expect(200);
    expect(kindsOf(company)).toEqual(['period']);

    changes = [];
    await t.app.get(CompanyStateService).recordUsage(company.id, 3);
    expect(kindsOf(company)).toEqual(['usage']);
  });
});
