import { Repository } from 'typeorm';
import { CompanyAuditEvent } from '../src/modules/companies/entities/company-audit-event.entity';
import { Company } from '../src/modules/companies/entities/company.entity';
import { Notification } from '../src/modules/notifications/entities/notification.entity';
import { SpamReport } from '../src/modules/spam-reports/entities/spam-report.entity';
import { SuppressionEntry } from '../src/modules/suppression/entities/suppression-entry.entity';
import { User } from '../src/modules/users/entities/user.entity';
import { countRows, createActiveUser, createAdmin, expectFailure, storeDomain } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const API_KEY = 'internal-api-key-for-tests-0123456789abcdef';
const THRESHOLD = 3;

describe('Spam reports (POST /api/v1/spamming-mail)', () => {
  let t: TestApp;
  let reports: Repository<SpamReport>;
  let notifications: Repository<Notification>;

  /** A fresh active company with its owner. */
  async function company(): Promise<Company & { ownerId: number }> {
    const owner = await createActiveUser(t);
    const found = await t.dataSource.getRepository(Company).findOneByOrFail({ uuid: owner.companyUuid });
    const user = await t.dataSource.getRepository(User).findOneByOrFail({ uuid: owner.userUuid });
    return Object.assign(found, { ownerId: user.id });
  }

  const report = (body: object, key = API_KEY) =>
    t.http().post('/api/v1/spamming-mail').set('x-api-key', key).send(body);

  const notificationsOf = (userId: number, type: string) =>
    notifications.countBy({ userId, type: type as never });

  beforeAll(async () => {
    t = await createTestApp({
      smtp: true,
      env: { INTERNAL_API_KEY: API_KEY, SPAM_SUSPEND_THRESHOLD: String(THRESHOLD) },
    });
    reports = t.dataSource.getRepository(SpamReport);
    notifications = t.dataSource.getRepository(Notification);
    await createAdmin(t, 'admin');
  });
  afterAll(async () => {
    await t.close();
  });

  it('stores a report, suppresses the recipient for the company and notifies its users (201)', async () => {
    const acme = await company();
    const res = await report({
      relayUsername: acme.relayUsername,
      messageId: '<m1@acme.test>',
      recipient: 'Angry@Example.net',
      reason: 'user clicked "report spam"',
      score: 7.5,
    }).expect(201);
    expect(res.body).toMatchObject({ status: 'success', code: 201, msg: 'Spam report received' });
    expect(res.body.data).toEqual({ reportUuid: expect.any(String), companySuspended: false });

    const stored = await reports.findOneByOrFail({ uuid: res.body.data.reportUuid });
    expect(stored).toMatchObject({
      companyId: acme.id,
      reportedBy: 'internal-api',
      messageId: '<m1@acme.test>',
      recipient: 'angry@example.net',
      score: 7.5,
    });
    const entry = await t.dataSource
      .getRepository(SuppressionEntry)
      .findOneByOrFail({ companyId: acme.id, email: 'angry@example.net' });
    expect(entry).toMatchObject({ reason: 'spam_report', source: 'spam_report' });
    expect(await notificationsOf(acme.ownerId, 'spam.reported')).toBe(1);
    expect((await t.dataSource.getRepository(Company).findOneByOrFail({ id: acme.id })).status).toBe(
      'active',
    );
  });

  it('counts the same report once, also when it arrives twice at the same moment (200 the second time)', async () => {
    const acme = await company();
    const body = { companyUuid: acme.uuid, messageId: '<dup@acme.test>', recipient: 'x@example.net' };
    const [a, b] = await Promise.all([report(body), report(body)]);
    expect([a.status, b.status].sort()).toEqual([200, 201]);
    expect(a.body.data.reportUuid).toBe(b.body.data.reportUuid);
    expect(await reports.countBy({ companyId: acme.id })).toBe(1);
    expect(await notificationsOf(acme.ownerId, 'spam.reported')).toBe(1);
    // Without a message id every report counts.
    await report({ companyUuid: acme.uuid }).expect(201);
    await report({ companyUuid: acme.uuid }).expect(201);
    expect(await reports.countBy({ companyId: acme.id })).toBe(3);
  });

  it('suspends the company at the threshold within 24 hours, once, and tells its users and the admins', async () => {
    const acme = await company();
    // An old report does not count towards the 24 hours.
    await reports.save(
      reports.create({
        companyId: acme.id,
        reportedBy: 'internal-api',
        receivedAt: new Date(Date.now() - 25 * 3_600_000),
      }),
    );
    const results = [];
    for (let i = 0; i < THRESHOLD + 1; i++) {
      results.push(
        (await report({ relayUsername: acme.relayUsername }).expect(201)).body.data.companySuspended,
      );
    }
    expect(results).toEqual([false, false, true, true]);
    const suspended = await t.dataSource.getRepository(Company).findOneByOrFail({ id: acme.id });
    expect(suspended).toMatchObject({ status: 'suspended', suspendedReason: 'spam' });
    expect(await notificationsOf(acme.ownerId, 'company.suspended')).toBe(1);
    const adminNotices = await notifications
      .createQueryBuilder('n')
      .where('n.admin_id IS NOT NULL')
      .andWhere("n.type = 'company.suspended'")
      .andWhere('n.data LIKE :uuid', { uuid: `%${acme.uuid}%` })
      .getCount();
    expect(adminNotices).toBeGreaterThanOrEqual(1);
    const audit = await t.dataSource.getRepository(CompanyAuditEvent).findBy({ companyId: acme.id });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ adminUuid: null, action: 'status.changed' });
    // The relay's view of the company.
    const mail = await t.smtp.waitFor(
      (await t.dataSource.getRepository(User).findOneByOrFail({ id: acme.ownerId })).email,
      /suspended/i,
    );
    expect(mail.text).toMatch(/spam reports/);
  });

  it('suspends once when the threshold is crossed by concurrent reports', async () => {
    const acme = await company();
    await Promise.all(
      Array.from({ length: THRESHOLD + 2 }, () => report({ companyUuid: acme.uuid }).expect(201)),
    );
    expect(await reports.countBy({ companyId: acme.id })).toBe(THRESHOLD + 2);
    expect(await notificationsOf(acme.ownerId, 'company.suspended')).toBe(1);
    expect(await t.dataSource.getRepository(CompanyAuditEvent).countBy({ companyId: acme.id })).toBe(1);
  });

  it('finds the company by the verified domain of the sender', async () => {
    const acme = await company();
    await storeDomain(t, acme.id, 'spam-sender.test');
    const res = await report({ sender: 'News@Spam-Sender.TEST', messageId: '<by-sender@x>' }).expect(201);
    expect((await reports.findOneByOrFail({ uuid: res.body.data.reportUuid })).companyId).toBe(acme.id);
  });

  it('names the company by the one attribution rule: a relay username in any case, a U-label sender', async () => {
    const acme = await company();
    await storeDomain(t, acme.id, 'xn--spm-sender-r5a.test');
    const cases = [
      { relayUsername: acme.relayUsername.toUpperCase() },
      { sender: 'news@späm-sender.test' },
      { sender: 'news@SPÄM-SENDER.test' },
    ];
    for (const [i, named] of cases.entries()) {
      const res = await report({ ...named, messageId: `<attribution-${i}@x>` }).expect(201);
      expect((await reports.findOneByOrFail({ uuid: res.body.data.reportUuid })).companyId).toBe(acme.id);
    }
  });

  it.each([
    [
      'no company named',
      { messageId: '<x@y>' },
      400,
      'One of relayUsername, companyUuid or sender is required',
    ],
    ['an unknown relay username', { relayUsername: 'r-nobody' }, 404, 'Company not found'],
    ['an unknown company', { companyUuid: '00000000-0000-4000-8000-000000000000' }, 404, 'Company not found'],
    [
      'a sender whose domain no company verified',
      { sender: 'news@acme.test' },
      404,
      'No company found for this sender',
    ],
    [
      'a recipient that is not an address',
      { companyUuid: '00000000-0000-4000-8000-000000000000', recipient: 'nope' },
      400,
      undefined,
    ],
    [
      'a score that is text',
      { companyUuid: '00000000-0000-4000-8000-000000000000', score: 'high' },
      400,
      undefined,
    ],
    ['an unknown field', { companyUuid: '00000000-0000-4000-8000-000000000000', spam: true }, 400, undefined],
  ])('refuses %s and writes nothing', async (_case, body, status, msg) => {
    const before = await countRows(t, 'spam_reports');
    const res = await report(body).expect(status);
    expectFailure(res.body, status, msg);
    expect(await countRows(t, 'spam_reports')).toBe(before);
  });

  it('refuses a wrong API key with 401', async () => {
    const acme = await company();
    const res = await report({ companyUuid: acme.uuid }, 'wrong-key').expect(401);
    expectFailure(res.body, 401);
    expect(await reports.countBy({ companyId: acme.id })).toBe(0);
  });
});
