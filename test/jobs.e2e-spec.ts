import { CronExpression, SchedulerRegistry } from '@nestjs/schedule';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { PostgresDataSourceOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions';
import { BlacklistService } from '../src/modules/auth/blacklist.service';
import { BillingsJobs } from '../src/modules/billings/billings-jobs';
import { Billing, BillingStatus } from '../src/modules/billings/entities/billing.entity';
import { Company } from '../src/modules/companies/entities/company.entity';
import { JobRegistry } from '../src/modules/jobs/job-registry';
import { LOCK_NAMESPACE, lockKey } from '../src/database/sql-dialect';
import { cronNameOf, JOB_CADENCE, JobsService } from '../src/modules/jobs/jobs.service';
import { Notification } from '../src/modules/notifications/entities/notification.entity';
import { Package } from '../src/modules/packages/entities/package.entity';
import { User } from '../src/modules/users/entities/user.entity';
import {
  bearer,
  countRows,
  createActiveUser,
  createAdmin,
  CreatedAdmin,
  expectFailure,
  LoggedIn,
  RegisteredUser,
} from './support/factories';
import { insertBilling } from './support/billing-fixtures';
import { createTestApp, TestApp } from './support/test-app';

/**
 * quality.md "Reliability": scheduled jobs run on one replica at a time (a PostgreSQL advisory
 * lock), are safe to run twice, and each runs on demand through GET /api/v1/t3st-job
 * (superAdmin only, endpoints.md). A skipped run (lock held elsewhere) answers
 * `{ ok: true, affected: 0, skipped: true }`.
 */

const HOUR = 3_600_000;
const JOB = '/api/v1/t3st-job';
const OWN_JOBS = ['expire-billings', 'billing-reminders', 'purge-blacklist'];

interface JobItem {
  job: string;
  ok: boolean;
  affected: number;
  ms: number;
  skipped: boolean;
}

describe('Scheduled jobs', () => {
  let t: TestApp;
  let superAdmin: CreatedAdmin;
  let pkg: Package;

  beforeAll(async () => {
    t = await createTestApp();
    // The crons would fire during the run; the tests run every job on demand instead.
    for (const cron of t.app.get(SchedulerRegistry).getCronJobs().values()) await cron.stop();
    superAdmin = await createAdmin(t, 'superAdmin');
    const packages = t.dataSource.getRepository(Package);
    pkg = await packages.save(
      packages.create({ name: 'Starter', quota: 100, price: 150000, currency: 'IDR', durationDays: 30 }),
    );
  });
  afterAll(async () => {
    await t.close();
  });

  const runJob = async (job?: string): Promise<JobItem[]> => {
    const res = await t
      .http()
      .get(JOB)
      .query(job ? { job } : {})
      .set(...bearer(superAdmin.accessToken))
      .expect(200);
    expect(res.body).toMatchObject({ status: 'success', code: 200 });
    return res.body.data.items as JobItem[];
  };

  const companyOf = (u: RegisteredUser) =>
    t.dataSource.getRepository(Company).findOneByOrFail({ uuid: u.companyUuid });

  function billing(company: Company, status: BillingStatus, expiresInMs: number): Promise<Billing> {
    return insertBilling(t, company.id, pkg, { status, expiresAt: new Date(Date.now() + expiresInMs) });
  }
  const reload = (b: Billing) => t.dataSource.getRepository(Billing).findOneByOrFail({ id: b.id });

  it('schedules every registered job with its cadence', () => {
    const crons = t.app.get(SchedulerRegistry).getCronJobs();
    for (const name of OWN_JOBS) {
      const cron = crons.get(cronNameOf(name));
      expect([name, cron?.cronTime.source]).toEqual([name, JOB_CADENCE[name]]);
    }
    expect(JOB_CADENCE['expire-billings']).toBe(CronExpression.EVERY_MINUTE);
    expect(JOB_CADENCE['billing-reminders']).toBe(CronExpression.EVERY_HOUR);
    expect(JOB_CADENCE['purge-blacklist']).toBe(CronExpression.EVERY_HOUR);
    expect(JOB_CADENCE['retry-callbacks']).toBe(CronExpression.EVERY_MINUTE);
  });

  describe('expire-billings', () => {
    it('expires only pending billings whose expiresAt has passed; a second run changes nothing', async () => {
      const company = await companyOf(await createActiveUser(t));
      const due = [await billing(company, 'pending', -HOUR), await billing(company, 'pending', -1000)];
      const future = await billing(company, 'pending', 48 * HOUR); // beyond the reminder window too
      const paid = await billing(company, 'paid', -HOUR);
      const review = await billing(company, 'awaiting_review', -HOUR);
      const cancelled = await billing(company, 'cancelled', -HOUR);

      const [first] = await runJob('expire-billings');
      expect(first).toEqual({
        job: 'expire-billings',
        ok: true,
        affected: 2,
        ms: expect.any(Number),
        skipped: false,
      });
      for (const b of due) expect((await reload(b)).status).toBe('expired');
      expect((await reload(future)).status).toBe('pending');
      expect((await reload(paid)).status).toBe('paid');
      expect((await reload(review)).status).toBe('awaiting_review');
      expect((await reload(cancelled)).status).toBe('cancelled');

      const [second] = await runJob('expire-billings');
      expect(second).toMatchObject({ ok: true, affected: 0, skipped: false });
    });
  });

  describe('billing-reminders', () => {
    let owner: RegisteredUser & LoggedIn;

    beforeAll(async () => {
      owner = await createActiveUser(t);
    });

    const expiringNotices = async (u: RegisteredUser) => {
      const user = await t.dataSource.getRepository(User).findOneByOrFail({ uuid: u.userUuid });
      return t.dataSource
        .getRepository(Notification)
        .find({ where: { userId: user.id, type: 'billing.expiring' } });
    };

    it('notifies the company once (and e-mails) for a pending billing expiring within 24 h', async () => {
      const company = await companyOf(owner);
      const soon = await billing(company, 'pending', 2 * HOUR);
      const later = await billing(company, 'pending', 48 * HOUR);
      const paidSoon = await billing(company, 'paid', 2 * HOUR);
      const reminded = await billing(company, 'pending', 3 * HOUR);
      await t.dataSource.getRepository(Billing).update({ id: reminded.id }, { reminderSentAt: new Date() });

      const [first] = await runJob('billing-reminders');
      expect(first).toMatchObject({ job: 'billing-reminders', ok: true, affected: 1, skipped: false });
      expect((await reload(soon)).reminderSentAt).toBeInstanceOf(Date);
      expect((await reload(later)).reminderSentAt).toBeNull();
      expect((await reload(paidSoon)).reminderSentAt).toBeNull();

      const notices = await expiringNotices(owner);
      expect(notices).toHaveLength(1);
      expect(notices[0]).toMatchObject({
        title: `Invoice ${soon.number} expires soon`,
        data: { billingUuid: soon.uuid },
      });
      const mail = await t.smtp.waitFor(owner.email, /expires soon/);
      expect(mail.text).toContain(soon.number);
      expect(mail.text).toContain(`/billing/${soon.uuid}`);

      const [second] = await runJob('billing-reminders');
      expect(second).toMatchObject({ ok: true, affected: 0 });
      expect(await expiringNotices(owner)).toHaveLength(1);
      await t.settle();
      expect(t.smtp.count(owner.email, /expires soon/)).toBe(1);
    });

    it('two concurrent runs remind once (the claim is a conditional update)', async () => {
      const other = await createActiveUser(t);
      await billing(await companyOf(other), 'pending', 5 * HOUR);
      const jobs = t.app.get(BillingsJobs);
      const counts = await Promise.all([jobs.remindExpiring(), jobs.remindExpiring(), jobs.remindExpiring()]);
      expect(counts.reduce((a, b) => a + b, 0)).toBe(1);
      expect(await expiringNotices(other)).toHaveLength(1);
    });
  });

  describe('purge-blacklist', () => {
    it('deletes expired blacklist entries only; a second run changes nothing', async () => {
      const blacklist = t.app.get(BlacklistService);
      const token = () => randomBytes(16).toString('hex');
      await blacklist.revoke(token(), new Date(Date.now() - HOUR));
      await blacklist.revoke(token(), new Date(Date.now() - 1000));
      const live = token();
      await blacklist.revoke(live, new Date(Date.now() + HOUR));
      const before = await countRows(t, 'refresh_token_blacklist');

      const [first] = await runJob('purge-blacklist');
      expect(first).toMatchObject({ job: 'purge-blacklist', ok: true, affected: 2, skipped: false });
      expect(await countRows(t, 'refresh_token_blacklist')).toBe(before - 2);
      expect(await blacklist.isRevoked(live)).toBe(true);
      expect((await runJob('purge-blacklist'))[0]).toMatchObject({ ok: true, affected: 0 });
    });
  });

  describe('GET /api/v1/t3st-job', () => {
    it('runs every registered job when no job is named: one item each', async () => {
      const items = await runJob();
      const names = t.app.get(JobRegistry).names();
      expect(items.map((i) => i.job)).toEqual(names);
      expect(names).toEqual(expect.arrayContaining(OWN_JOBS));
      for (const item of items) {
        expect(item).toEqual({
          job: item.job,
          ok: true,
          affected: expect.any(Number),
          ms: expect.any(Number),
          skipped: false,
        });
      }
    });

    it('refuses an unknown job with 400 listing the registered ones', async () => {
      const res = await t
        .http()
        .get(`${JOB}?job=make-coffee`)
        .set(...bearer(superAdmin.accessToken))
        .expect(400);
      expectFailure(res.body, 400);
      for (const name of OWN_JOBS) expect(res.body.msg).toContain(name);
      await t
        .http()
        .get(`${JOB}?job=DROP%20TABLE`)
        .set(...bearer(superAdmin.accessToken))
        .expect(400);
      await t
        .http()
        .get(`${JOB}?job=a&job=b`)
        .set(...bearer(superAdmin.accessToken))
        .expect(400);
      await t
        .http()
        .get(`${JOB}?other=1`)
        .set(...bearer(superAdmin.accessToken))
        .expect(400);
    });

    it('is for superAdmin only: admin and accounting 403, a user 403, nobody 401', async () => {
      const admin = await createAdmin(t, 'admin');
      const accounting = await createAdmin(t, 'accounting');
      const user = await createActiveUser(t);
      for (const caller of [admin, accounting]) {
        const res = await t
          .http()
          .get(JOB)
          .set(...bearer(caller.accessToken))
          .expect(403);
        expectFailure(res.body, 403, 'Your role does not allow this');
      }
      expectFailure(
        (
          await t
            .http()
            .get(JOB)
            .set(...bearer(user.accessToken))
            .expect(403)
        ).body,
        403,
      );
      expectFailure((await t.http().get(JOB).expect(401)).body, 401);
    });

    it("reports one job's failure as ok:false and still runs the others", async () => {
      const registry = t.app.get(JobRegistry);
      registry.register({ name: 'always-fails', run: () => Promise.reject(new Error('boom')) });
      const items = await runJob();
      expect(items.find((i) => i.job === 'always-fails')).toMatchObject({
        ok: false,
        affected: 0,
        skipped: false,
      });
      for (const name of OWN_JOBS) expect(items.find((i) => i.job === name)).toMatchObject({ ok: true });
      const [one] = await runJob('always-fails');
      expect(one).toMatchObject({ job: 'always-fails', ok: false });
    });
  });

  it('a job never overlaps itself in one process: a concurrent second run is skipped', async () => {
    const jobs = t.app.get(JobsService);
    const [a, b] = await Promise.all([jobs.run('purge-blacklist'), jobs.run('purge-blacklist')]);
    expect(a[0]).toMatchObject({ ok: true, skipped: false });
    expect(b[0]).toEqual({
      job: 'purge-blacklist',
      ok: true,
      affected: 0,
      ms: expect.any(Number),
      skipped: true,
    });
  });

  const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;

  onPostgres('on PostgreSQL (advisory lock)', () => {
    let other: Client;

    beforeAll(async () => {
      // Another replica: its own connection to the same database.
      other = new Client({ connectionString: (t.dataSource.options as PostgresDataSourceOptions).url });
      await other.connect();
    });
    afterAll(async () => {
      await other.end();
    });

    const keys = (job: string) => [LOCK_NAMESPACE, lockKey(job)];

    it('skips a job whose lock another replica holds, and runs it once the lock is free', async () => {
      const company = await companyOf(await createActiveUser(t));
      const due = await billing(company, 'pending', -HOUR);

      await other.query('SELECT pg_advisory_lock($1, $2)', keys('expire-billings'));
      try {
        const [skipped] = await runJob('expire-billings');
        expect(skipped).toEqual({
          job: 'expire-billings',
          ok: true,
          affected: 0,
          ms: expect.any(Number),
          skipped: true,
        });
        expect((await reload(due)).status).toBe('pending');
        // Only the named job's lock is held: another job runs.
        expect((await runJob('purge-blacklist'))[0]).toMatchObject({ ok: true, skipped: false });
      } finally {
        await other.query('SELECT pg_advisory_unlock($1, $2)', keys('expire-billings'));
      }

      const [ran] = await runJob('expire-billings');
      expect(ran).toMatchObject({ ok: true, affected: 1, skipped: false });
      expect((await reload(due)).status).toBe('expired');
    });

    it('releases the lock after each run, also when the job fails', async () => {
      await runJob('expire-billings');
      await runJob('always-fails');
      for (const job of ['expire-billings', 'always-fails']) {
        const res = await other.query<{ locked: boolean }>(
          'SELECT pg_try_advisory_lock($1, $2) AS locked',
          keys(job),
        );
        expect([job, res.rows[0].locked]).toEqual([job, true]);
        await other.query('SELECT pg_advisory_unlock($1, $2)', keys(job));
      }
    });
  });
});
