import { SchedulerRegistry } from '@nestjs/schedule';
import { BillingPaymentsService } from '../src/modules/billings/billing-payments.service';
import { Billing } from '../src/modules/billings/entities/billing.entity';
import { PaymentEvent } from '../src/modules/billings/entities/payment-event.entity';
import { Company } from '../src/modules/companies/entities/company.entity';
import { JobRegistry } from '../src/modules/jobs/job-registry';
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
import { PaymentGatewayServer } from './support/payment-gateway-server';
import { createTestApp, TestApp } from './support/test-app';

/**
 * integrations.md "Callback" and quality.md "Reliability": every payment callback is stored
 * raw before it is applied, copies are no-ops (one period extension for 20 parallel copies),
 * mismatches are recorded and reported to accounting, and a failure while applying leaves the
 * event stored for the gateway's retry and the `retry-callbacks` job.
 */

const SECRET_KEY = 'xnd_development_callback_secret_0123456789';
const CALLBACK_TOKEN = 'callback-token-for-tests-0123456789';
const DAY = 86_400_000;
const CALLBACK = '/api/v1/callback-payment';

type Owner = RegisteredUser & LoggedIn;

let seq = 0;

describe('POST /api/v1/callback-payment', () => {
  let t: TestApp;
  let gateway: PaymentGatewayServer;
  let pkg: Package;
  let accounting: CreatedAdmin;
  let superAdmin: CreatedAdmin;
  let plainAdmin: CreatedAdmin;

  beforeAll(async () => {
    gateway = new PaymentGatewayServer(SECRET_KEY);
    await gateway.start();
    t = await createTestApp({
      env: {
        PAYMENT_GATEWAY_URL: gateway.url,
        PAYMENT_GATEWAY_SECRET_KEY: SECRET_KEY,
        PAYMENT_CALLBACK_TOKEN: CALLBACK_TOKEN,
        PAYMENT_SUCCESS_URL: undefined,
        PAYMENT_FAILURE_URL: undefined,
      },
    });
    // The scheduler would run retry-callbacks on the minute; these tests run it themselves.
    for (const cron of t.app.get(SchedulerRegistry).getCronJobs().values()) void cron.stop();
    const packages = t.dataSource.getRepository(Package);
    pkg = await packages.save(
      packages.create({
        name: 'Callback Pro',
        quota: 5000,
        price: 150000,
        currency: 'IDR',
        durationDays: 30,
      }),
    );
    accounting = await createAdmin(t, 'accounting');
    superAdmin = await createAdmin(t, 'superAdmin');
    plainAdmin = await createAdmin(t, 'admin');
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await t.close();
    await gateway.stop();
  });

  /** A pending gateway billing of the owner's company, created through the repository. */
  async function pendingBilling(owner: Owner, overrides: Partial<Billing> = {}): Promise<Billing> {
    const company = await t.dataSource.getRepository(Company).findOneByOrFail({ uuid: owner.companyUuid });
    seq += 1; // also names this test's webhook ids
    return insertBilling(t, company.id, pkg, overrides);
  }

  /** The owner asks for the gateway invoice, as the front end does; returns the gateway invoice id. */
  async function invoiceOf(owner: Owner, billing: Billing): Promise<string> {
    const res = await t
      .http()
      .post('/api/v1/payment-gateway')
      .set(...bearer(owner.accessToken))
      .send({ billingUuid: billing.uuid })
      .expect(200);
    return (res.body.data as { gatewayInvoiceId: string }).gatewayInvoiceId;
  }

  function paidBody(billing: Billing, invoiceId: string, extra: Record<string, unknown> = {}) {
    return {
      id: invoiceId,
      external_id: billing.externalId,
      status: 'PAID',
      amount: billing.amount,
      paid_amount: billing.amount,
      paid_at: new Date().toISOString(),
      currency: billing.currency,
      payment_method: 'BANK_TRANSFER',
      payment_channel: 'MANDIRI',
      user_id: '6279ce',
      merchant_name: 'Relay',
      ...extra,
    };
  }

  const callback = (body: unknown, headers: Record<string, string> = {}) =>
    t
      .http()
      .post(CALLBACK)
      .set('x-callback-token', CALLBACK_TOKEN)
      .set(headers)
      .send(body as object);

  const billingNow = (billing: Billing) =>
    t.dataSource.getRepository(Billing).findOneByOrFail({ id: billing.id });
  const companyOf = (owner: Owner) =>
    t.dataSource.getRepository(Company).findOneByOrFail({ uuid: owner.companyUuid });
  const eventsOf = (invoiceId: string) =>
    t.dataSource
      .getRepository(PaymentEvent)
      .find({ where: { gatewayInvoiceId: invoiceId }, order: { id: 'ASC' } });

  /** billing.paid (or another type) notifications of the company's users about one billing. */
  async function userNotifications(owner: Owner, type: string, billingUuid: string): Promise<number> {
    const company = await companyOf(owner);
    const users = await t.dataSource.getRepository(User).find({ where: { companyId: company.id } });
    const userIds = new Set(users.map((u) => u.id));
    const notes = await t.dataSource.getRepository(Notification).find({ where: { type: type as never } });
    return notes.filter(
      (n) => n.userId !== null && userIds.has(n.userId) && n.data?.billingUuid === billingUuid,
    ).length;
  }

  describe('the full path', () => {
    let owner: Owner;
    let billing: Billing;
    let invoiceId: string;

    it('register → billing → gateway invoice → PAID callback → subscription active with the package quota', async () => {
      owner = await createActiveUser(t);
      const before = await t
        .http()
        .get('/api/v1/users/me')
        .set(...bearer(owner.accessToken))
        .expect(200);
      expect(before.body.data.company.relayStatus).toBe('no_package');

      // The billing as the customer creates it (POST /api/v1/billings), then its gateway invoice.
      const created = await t
        .http()
        .post('/api/v1/billings')
        .set(...bearer(owner.accessToken))
        .send({ packageUuid: pkg.uuid, method: 'gateway' })
        .expect(201);
      billing = await t.dataSource.getRepository(Billing).findOneByOrFail({ uuid: created.body.data.uuid });
      expect(billing).toMatchObject({
        status: 'pending',
        method: 'gateway',
        amount: 150000,
        currency: 'IDR',
      });
      invoiceId = await invoiceOf(owner, billing);

      const body = paidBody(billing, invoiceId);
      const res = await callback(body).expect(200);
      expect(res.body).toMatchObject({
        status: 'success',
        code: 200,
        data: { billingUuid: billing.uuid, outcome: 'applied' },
      });

      const paid = await billingNow(billing);
      expect(paid).toMatchObject({
        status: 'paid',
        paidAmount: 150000,
        paymentMethod: 'BANK_TRANSFER',
        paymentChannel: 'MANDIRI',
      });
      expect(paid.paidAt?.toISOString()).toBe(body.paid_at);

      const company = await companyOf(owner);
      expect(company).toMatchObject({ packageUuid: pkg.uuid, quota: 5000, used: 0 });
      expect(company.periodEnd!.getTime() - company.periodStart!.getTime()).toBe(30 * DAY);

      const me = await t
        .http()
        .get('/api/v1/users/me')
        .set(...bearer(owner.accessToken))
        .expect(200);
      expect(me.body.data.company.relayStatus).toBe('active');

      const [event] = await eventsOf(invoiceId);
      expect(event).toMatchObject({
        eventKey: `${invoiceId}:PAID`,
        externalId: billing.externalId,
        status: 'PAID',
        outcome: 'applied',
        billingUuid: billing.uuid,
        attempts: 1,
        lastError: null,
      });
      expect(event.appliedAt).toBeInstanceOf(Date);
      // Stored raw, the gateway's extra fields included.
      expect(JSON.parse(event.raw)).toEqual(body);
      expect(await userNotifications(owner, 'billing.paid', billing.uuid)).toBe(1);
    });

    it('a late EXPIRED after PAID answers 200 "ignored" and the billing stays paid', async () => {
      const res = await callback({ ...paidBody(billing, invoiceId), status: 'EXPIRED' }).expect(200);
      expect(res.body.data).toEqual({ billingUuid: billing.uuid, outcome: 'ignored' });
      expect((await billingNow(billing)).status).toBe('paid');
      const events = await eventsOf(invoiceId);
      expect(events.map((e) => [e.status, e.outcome])).toEqual([
        ['PAID', 'applied'],
        ['EXPIRED', 'ignored'],
      ]);
    });

    it('SETTLED after PAID is a duplicate of the payment: nothing changes', async () => {
      const periodEnd = (await companyOf(owner)).periodEnd;
      const res = await callback({ ...paidBody(billing, invoiceId), status: 'SETTLED' }).expect(200);
      expect(res.body.data).toEqual({ billingUuid: billing.uuid, outcome: 'duplicate' });
      expect((await companyOf(owner)).periodEnd).toEqual(periodEnd);
      expect(await userNotifications(owner, 'billing.paid', billing.uuid)).toBe(1);
    });
  });

  it('20 parallel copies of one PAID: one applied, 19 duplicates, one period extension, one notification', async () => {
    const owner = await createActiveUser(t);
    const first = await pendingBilling(owner);
    const firstInvoice = await invoiceOf(owner, first);
    await callback(paidBody(first, firstInvoice)).expect(200);
    const periodEnd = (await companyOf(owner)).periodEnd!.getTime();

    const billing = await pendingBilling(owner);
    const invoiceId = await invoiceOf(owner, billing);
    const body = paidBody(billing, invoiceId);
    const answers = await Promise.all(Array.from({ length: 20 }, () => callback(body)));

    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    const outcomes = answers.map((a) => (a.body.data as { outcome: string }).outcome);
    expect(outcomes.filter((o) => o === 'applied')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'duplicate')).toHaveLength(19);

    const events = await eventsOf(invoiceId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ outcome: 'applied', billingUuid: billing.uuid });

    expect((await billingNow(billing)).status).toBe('paid');
    expect((await companyOf(owner)).periodEnd!.getTime()).toBe(periodEnd + 30 * DAY);
    expect(await userNotifications(owner, 'billing.paid', billing.uuid)).toBe(1);
  });

  it('the same body under different webhook-id headers is still applied once; a repeated webhook-id is a duplicate', async () => {
    const owner = await createActiveUser(t);
    const billing = await pendingBilling(owner);
    const invoiceId = await invoiceOf(owner, billing);
    const body = paidBody(billing, invoiceId);

    const answers = [];
    for (let i = 0; i < 5; i += 1)
      answers.push(await callback(body, { 'webhook-id': `wh-${seq}-${i}` }).expect(200));
    expect(answers.map((a) => a.body.data.outcome)).toEqual([
      'applied',
      'duplicate',
      'duplicate',
      'duplicate',
      'duplicate',
    ]);
    expect(answers[1].body.data).toEqual({ billingUuid: billing.uuid, outcome: 'duplicate' });

    // Another status under an already seen webhook-id: the delivery was seen, nothing changes.
    const replay = await callback({ ...body, status: 'EXPIRED' }, { 'webhook-id': `wh-${seq}-0` }).expect(
      200,
    );
    expect(replay.body.data.outcome).toBe('duplicate');

    const events = await eventsOf(invoiceId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ webhookId: `wh-${seq}-0`, outcome: 'applied' });
    expect(await userNotifications(owner, 'billing.paid', billing.uuid)).toBe(1);
  });

  it('an amount or currency mismatch is stored, not applied, and reported to accounting and superAdmins', async () => {
    const owner = await createActiveUser(t);
    const cases = [{ paid_amount: 149999 }, { currency: 'USD' }, { paid_amount: undefined, amount: 100 }];
    for (const change of cases) {
      const billing = await pendingBilling(owner);
      const invoiceId = await invoiceOf(owner, billing);
      const res = await callback(paidBody(billing, invoiceId, change)).expect(200);
      expect(res.body.data).toEqual({ billingUuid: billing.uuid, outcome: 'mismatch' });
      expect((await billingNow(billing)).status).toBe('pending');
      expect((await eventsOf(invoiceId))[0]).toMatchObject({ outcome: 'mismatch' });

      const notes = await t.dataSource
        .getRepository(Notification)
        .find({ where: { type: 'billing.amount_mismatch' } });
      const mine = notes.filter((n) => n.data?.billingUuid === billing.uuid);
      const adminIds = await t.dataSource.query('SELECT id, uuid FROM admins');
      const idOf = (uuid: string) =>
        (adminIds as Array<{ id: number; uuid: string }>).find((a) => a.uuid === uuid)!.id;
      expect(mine.filter((n) => n.adminId === idOf(accounting.uuid))).toHaveLength(1);
      expect(mine.filter((n) => n.adminId === idOf(superAdmin.uuid))).toHaveLength(1);
      expect(mine.filter((n) => n.adminId === idOf(plainAdmin.uuid))).toHaveLength(0);
    }
    expect((await companyOf(owner)).packageUuid).toBeNull();
  });

  it('EXPIRED expires a pending billing; PENDING changes nothing', async () => {
    const owner = await createActiveUser(t);
    const billing = await pendingBilling(owner);
    const invoiceId = await invoiceOf(owner, billing);
    const pending = await callback({ ...paidBody(billing, invoiceId), status: 'PENDING' }).expect(200);
    expect(pending.body.data).toEqual({ billingUuid: billing.uuid, outcome: 'ignored' });
    expect((await billingNow(billing)).status).toBe('pending');

    const expired = await callback({ ...paidBody(billing, invoiceId), status: 'EXPIRED' }).expect(200);
    expect(expired.body.data).toEqual({ billingUuid: billing.uuid, outcome: 'applied' });
    expect((await billingNow(billing)).status).toBe('expired');

    // A PAID for an expired billing cannot move it back: stored and ignored.
    const late = await callback(paidBody(billing, invoiceId)).expect(200);
    expect(late.body.data).toEqual({ billingUuid: billing.uuid, outcome: 'ignored' });
    expect((await billingNow(billing)).status).toBe('expired');
  });

  it('an unknown external_id, or an id that is not the stored invoice, answers 200 "ignored" and is stored', async () => {
    const before = await countRows(t, 'payment_events');
    const unknown = await callback({
      id: 'inv-unknown-1',
      external_id: 'INV/NOPE/1',
      status: 'PAID',
      amount: 1000,
      currency: 'IDR',
    }).expect(200);
    expect(unknown.body.data).toEqual({ outcome: 'ignored' });
    const [stored] = await eventsOf('inv-unknown-1');
    expect(stored).toMatchObject({ outcome: 'ignored', billingUuid: null, externalId: 'INV/NOPE/1' });

    const owner = await createActiveUser(t);
    const billing = await pendingBilling(owner);
    await invoiceOf(owner, billing);
    const other = await callback(paidBody(billing, 'some-other-invoice')).expect(200);
    expect(other.body.data).toEqual({ billingUuid: billing.uuid, outcome: 'ignored' });
    expect((await billingNow(billing)).status).toBe('pending');
    expect(await countRows(t, 'payment_events')).toBe(before + 2);
  });

  it('refuses a missing or wrong token with 401 and a body that is not a callback with 400, storing nothing', async () => {
    const before = await countRows(t, 'payment_events');
    const body = { id: 'inv-x', external_id: 'INV/X', status: 'PAID', amount: 1, currency: 'IDR' };
    expectFailure((await t.http().post(CALLBACK).send(body).expect(401)).body, 401);
    expectFailure(
      (await t.http().post(CALLBACK).set('x-callback-token', 'wrong-token').send(body).expect(401)).body,
      401,
    );
    for (const bad of [{}, { id: 'inv-x' }, { status: 'PAID' }, { id: 42, status: 'PAID' }, [body]]) {
      const res = await callback(bad).expect(400);
      expectFailure(res.body, 400);
    }
    expect(await countRows(t, 'payment_events')).toBe(before);
  });

  it('a failure while applying answers 503 and keeps the event; the retry job applies it', async () => {
    const owner = await createActiveUser(t);
    const billing = await pendingBilling(owner);
    const invoiceId = await invoiceOf(owner, billing);
    const payments = t.app.get(BillingPaymentsService);
    const spy = jest.spyOn(payments, 'markPaid').mockRejectedValueOnce(new Error('database hiccup'));

    const res = await callback(paidBody(billing, invoiceId)).expect(503);
    expectFailure(res.body, 503);
    spy.mockRestore();

    let [event] = await eventsOf(invoiceId);
    expect(event).toMatchObject({ outcome: null, attempts: 1, appliedAt: null });
    expect(event.lastError).toMatch(/database hiccup/);
    expect((await billingNow(billing)).status).toBe('pending');

    const job = t.app.get(JobRegistry).get('retry-callbacks');
    expect(job).toBeDefined();
    expect(await job!.run()).toBe(1);
    [event] = await eventsOf(invoiceId);
    expect(event).toMatchObject({
      outcome: 'applied',
      attempts: 2,
      lastError: null,
      billingUuid: billing.uuid,
    });
    expect((await billingNow(billing)).status).toBe('paid');
    expect((await companyOf(owner)).packageUuid).toBe(pkg.uuid);
    // Nothing left to retry; the gateway's own retry is now a duplicate.
    expect(await job!.run()).toBe(0);
    const again = await callback(paidBody(billing, invoiceId)).expect(200);
    expect(again.body.data).toEqual({ billingUuid: billing.uuid, outcome: 'duplicate' });
  });

  it("the gateway's retry of a failed callback applies it", async () => {
    const owner = await createActiveUser(t);
    const billing = await pendingBilling(owner);
    const invoiceId = await invoiceOf(owner, billing);
    const payments = t.app.get(BillingPaymentsService);
    const spy = jest.spyOn(payments, 'markPaid').mockRejectedValueOnce(new Error('lock timeout'));
    const body = paidBody(billing, invoiceId);

    await callback(body, { 'webhook-id': `retry-${seq}` }).expect(503);
    spy.mockRestore();
    const retried = await callback(body, { 'webhook-id': `retry-${seq}` }).expect(200);
    expect(retried.body.data).toEqual({ billingUuid: billing.uuid, outcome: 'applied' });
    const events = await eventsOf(invoiceId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ outcome: 'applied', attempts: 2, lastError: null });
    expect(await userNotifications(owner, 'billing.paid', billing.uuid)).toBe(1);
    // The e-mail goes out after the response; wait for it so the app closes with nothing in flight.
    await t.smtp.waitFor(owner.email, /Payment received/);
  });
});

describe('POST /api/v1/callback-payment without PAYMENT_CALLBACK_TOKEN', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ smtp: false, env: { PAYMENT_CALLBACK_TOKEN: undefined } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 503 with or without a token, storing nothing', async () => {
    const body = { id: 'inv-1', external_id: 'INV/1', status: 'PAID', amount: 1, currency: 'IDR' };
    const bare = await t.http().post(CALLBACK).send(body).expect(503);
    expectFailure(bare.body, 503, 'Payment callback token is not configured');
    await t.http().post(CALLBACK).set('x-callback-token', 'anything').send(body).expect(503);
    expect(await countRows(t, 'payment_events')).toBe(0);
  });
});
