import { Billing } from '../src/modules/billings/entities/billing.entity';
import { Company } from '../src/modules/companies/entities/company.entity';
import { Package } from '../src/modules/packages/entities/package.entity';
import { PaymentGatewayClient } from '../src/modules/payment-gateway/payment-gateway.client';
import {
  bearer,
  countRows,
  createActiveUser,
  expectFailure,
  LoggedIn,
  RegisteredUser,
} from './support/factories';
import { createPackage, insertBilling } from './support/billing-fixtures';
import { PaymentGatewayServer } from './support/payment-gateway-server';
import { fakeDateAt } from './support/clock';
import { createTestApp, TestApp } from './support/test-app';

/**
 * integrations.md "Payment gateway": POST /api/v1/payment-gateway creates the gateway invoice
 * of a pending gateway billing once (HTTP Basic, the documented body), answers 502/504 for
 * gateway errors and timeouts without touching the billing, and 503 while unconfigured.
 */

const SECRET_KEY = 'xnd_development_test_secret_0123456789';
const DAY = 86_400_000;
const ROUTE = '/api/v1/payment-gateway';

type Owner = RegisteredUser & LoggedIn;

async function createBilling(
  t: TestApp,
  owner: Owner,
  pkg: Package,
  overrides: Partial<Billing> = {},
): Promise<Billing> {
  const company = await t.dataSource.getRepository(Company).findOneByOrFail({ uuid: owner.companyUuid });
  return insertBilling(t, company.id, pkg, overrides);
}

const reload = (t: TestApp, billing: Billing) =>
  t.dataSource.getRepository(Billing).findOneByOrFail({ id: billing.id });

describe('POST /api/v1/payment-gateway', () => {
  let t: TestApp;
  let gateway: PaymentGatewayServer;
  let owner: Owner;
  let pkg: Package;

  beforeAll(async () => {
    gateway = new PaymentGatewayServer(SECRET_KEY);
    await gateway.start();
    t = await createTestApp({
      env: {
        PAYMENT_GATEWAY_URL: gateway.url,
        PAYMENT_GATEWAY_SECRET_KEY: SECRET_KEY,
        PAYMENT_GATEWAY_TIMEOUT_MS: '300',
        PAYMENT_SUCCESS_URL: 'http://app.test/billing/success',
        PAYMENT_FAILURE_URL: 'http://app.test/billing/failure',
        PAYMENT_INVOICE_DURATION: undefined,
      },
    });
    owner = await createActiveUser(t);
    pkg = await createPackage(t, { quota: 100 });
  });
  afterAll(async () => {
    await t.close();
    await gateway.stop();
  });
  beforeEach(() => gateway.reset());

  const pay = (billingUuid: string, token = owner.accessToken) =>
    t
      .http()
      .post(ROUTE)
      .set(...bearer(token))
      .send({ billingUuid });

  it('creates the gateway invoice once, with Basic auth and the documented body, and returns the stored one after', async () => {
    const billing = await createBilling(t, owner, pkg);
    const first = await pay(billing.uuid).expect(200);
    expect(first.body).toMatchObject({ status: 'success', code: 200 });
    const data = first.body.data as { paymentUrl: string; gatewayInvoiceId: string; expiresAt: string };
    const invoice = gateway.invoices.find((i) => i.external_id === billing.externalId)!;
    expect(data).toEqual({
      paymentUrl: invoice.invoice_url,
      gatewayInvoiceId: invoice.id,
      expiresAt: new Date(invoice.expiry_date).toISOString(),
    });

    expect(gateway.requests).toHaveLength(1);
    const [request] = gateway.requests;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/v2/invoices');
    expect(request.authorization).toBe(`Basic ${Buffer.from(`${SECRET_KEY}:`).toString('base64')}`);
    expect(request.body).toEqual({
      external_id: billing.externalId,
      amount: 150000,
      currency: 'IDR',
      payer_email: owner.email,
      description: expect.stringContaining(billing.number),
      invoice_duration: 172800,
      success_redirect_url: 'http://app.test/billing/success',
      failure_redirect_url: 'http://app.test/billing/failure',
    });

    const stored = await reload(t, billing);
    expect(stored).toMatchObject({
      gatewayInvoiceId: invoice.id,
      paymentUrl: invoice.invoice_url,
      status: 'pending',
    });
    expect(stored.gatewayExpiresAt?.toISOString()).toBe(data.expiresAt);

    const again = await pay(billing.uuid).expect(200);
    expect(again.body.data).toEqual(data);
    expect(gateway.requests).toHaveLength(1);
  });

  it('makes one gateway invoice for concurrent calls on one billing', async () => {
    const billing = await createBilling(t, owner, pkg);
    const answers = await Promise.all(Array.from({ length: 10 }, () => pay(billing.uuid)));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    const ids = new Set(answers.map((a) => (a.body.data as { gatewayInvoiceId: string }).gatewayInvoiceId));
    expect(ids.size).toBe(1);
    expect(gateway.requests).toHaveLength(1);
    expect((await reload(t, billing)).gatewayInvoiceId).toBe([...ids][0]);
  });

  it('returns the invoice another replica stored first (conditional update), not its own', async () => {
    const billing = await createBilling(t, owner, pkg);
    const client = t.app.get(PaymentGatewayClient);
    const createInvoice = client.createInvoice.bind(client);
    const otherExpiry = new Date(Date.now() + DAY);
    const spy = jest.spyOn(client, 'createInvoice').mockImplementationOnce(async (request) => {
      const invoice = await createInvoice(request);
      // Meanwhile another replica stored its invoice for the same billing.
      const stored = { gatewayInvoiceId: 'other-replica', paymentUrl: 'https://pay.test/other' };
      await t.dataSource
        .getRepository(Billing)
        .update({ id: billing.id }, { ...stored, gatewayExpiresAt: otherExpiry });
      return invoice;
    });
    try {
      const res = await pay(billing.uuid).expect(200);
      expect(res.body.data).toEqual({
        gatewayInvoiceId: 'other-replica',
        paymentUrl: 'https://pay.test/other',
        expiresAt: otherExpiry.toISOString(),
      });
      expect((await reload(t, billing)).gatewayInvoiceId).toBe('other-replica');
    } finally {
      spy.mockRestore();
    }
  });

  it('asks for exactly PAYMENT_INVOICE_DURATION for a billing just created through the API', async () => {
    const created = await t
      .http()
      .post('/api/v1/billings')
      .set(...bearer(owner.accessToken))
      .send({ packageUuid: (await createPackage(t)).uuid, method: 'gateway' })
      .expect(201);
    // 2 s pass between buying and paying (well within the access token's minute): the invoice
    // still lasts the whole duration, not what is left of the billing's.
    fakeDateAt(Date.now() + 2_000);
    try {
      await pay(created.body.data.uuid as string).expect(200);
    } finally {
      jest.useRealTimers();
    }
    expect(gateway.requests).toHaveLength(1);
    expect(gateway.requests[0].body.invoice_duration).toBe(172800);
  });

  it('keeps a billing due before its invoice payable until the invoice expires', async () => {
    const billing = await createBilling(t, owner, pkg, { expiresAt: new Date(Date.now() + 3_600_000) });
    const res = await pay(billing.uuid).expect(200);
    expect(gateway.requests[0].body.invoice_duration).toBe(172800);
    const stored = await reload(t, billing);
    expect(stored.gatewayExpiresAt?.toISOString()).toBe(res.body.data.expiresAt);
    // The invoice never outlives the billing: a payment made through it can still be applied.
    expect(stored.expiresAt.getTime()).toBe(stored.gatewayExpiresAt!.getTime());
    expect(stored.expiresAt.getTime()).toBeGreaterThan(Date.now() + 2 * DAY - 60_000);
  });

  it('answers 502 with the gateway message when the gateway fails, leaving the billing unchanged', async () => {
    const billing = await createBilling(t, owner, pkg);
    gateway.mode = { kind: 'fail', status: 500, message: 'Gateway is having a bad day' };
    const res = await pay(billing.uuid).expect(502);
    expectFailure(res.body, 502, 'Gateway is having a bad day');
    expect(await reload(t, billing)).toMatchObject({
      status: 'pending',
      gatewayInvoiceId: null,
      paymentUrl: null,
      gatewayExpiresAt: null,
    });

    gateway.mode = { kind: 'fail', status: 400, message: 'amount must be at least 10000' };
    expectFailure((await pay(billing.uuid).expect(502)).body, 502, 'amount must be at least 10000');

    // Once the gateway recovers, the same billing gets its invoice.
    gateway.mode = { kind: 'ok' };
    await pay(billing.uuid).expect(200);
    expect((await reload(t, billing)).gatewayInvoiceId).toEqual(expect.any(String));
  });

  it('answers 504 when the gateway does not answer in time, leaving the billing unchanged', async () => {
    const billing = await createBilling(t, owner, pkg);
    gateway.mode = { kind: 'hang' };
    const started = Date.now();
    const res = await pay(billing.uuid).expect(504);
    expect(Date.now() - started).toBeLessThan(5000);
    expectFailure(res.body, 504, /did not answer in time/);
    expect(gateway.requests).toHaveLength(1);
    expect(await reload(t, billing)).toMatchObject({
      status: 'pending',
      gatewayInvoiceId: null,
      paymentUrl: null,
    });
  });

  it("answers 404 for another company's billing or an unknown one, without calling the gateway", async () => {
    const stranger = await createActiveUser(t);
    const theirs = await createBilling(t, stranger, pkg);
    expectFailure((await pay(theirs.uuid).expect(404)).body, 404, 'Billing not found');
    expectFailure(
      (await pay('6f1c1a62-8c1e-4f7e-9a39-0d1f2b3c4d5e').expect(404)).body,
      404,
      'Billing not found',
    );
    expect(gateway.requests).toHaveLength(0);
    expect((await reload(t, theirs)).gatewayInvoiceId).toBeNull();
  });

  it('answers 409 for a manual billing or one that is not pending', async () => {
    const manual = await createBilling(t, owner, pkg, { method: 'manual' });
    expectFailure((await pay(manual.uuid).expect(409)).body, 409, /manual/);
    for (const status of ['paid', 'expired', 'cancelled', 'awaiting_review'] as const) {
      const billing = await createBilling(t, owner, pkg, { status });
      const res = await pay(billing.uuid).expect(409);
      expectFailure(res.body, 409, `Cannot pay a billing that is ${status.replace('_', ' ')}`);
    }
    const overdue = await createBilling(t, owner, pkg, { expiresAt: new Date(Date.now() - 1000) });
    expectFailure((await pay(overdue.uuid).expect(409)).body, 409, /expired/);
    expect(gateway.requests).toHaveLength(0);
  });

  it('validates the body and requires the bearer token', async () => {
    const bad = await t
      .http()
      .post(ROUTE)
      .set(...bearer(owner.accessToken))
      .send({ billingUuid: 'not-a-uuid' })
      .expect(400);
    expectFailure(bad.body, 400, 'Validation failed');
    await t.http().post(ROUTE).send({ billingUuid: '6f1c1a62-8c1e-4f7e-9a39-0d1f2b3c4d5e' }).expect(401);
    expect(gateway.requests).toHaveLength(0);
  });
});

describe('POST /api/v1/payment-gateway without a gateway secret key', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ smtp: true, env: { PAYMENT_GATEWAY_SECRET_KEY: undefined } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 503 "Payment gateway is not configured" and changes nothing', async () => {
    const owner = await createActiveUser(t);
    const billing = await createBilling(t, owner, await createPackage(t, { quota: 100 }));
    const res = await t
      .http()
      .post(ROUTE)
      .set(...bearer(owner.accessToken))
      .send({ billingUuid: billing.uuid })
      .expect(503);
    expectFailure(res.body, 503, 'Payment gateway is not configured');
    expect(await reload(t, billing)).toMatchObject({ status: 'pending', gatewayInvoiceId: null });
    expect(await countRows(t, 'billings')).toBe(1);
  });
});
