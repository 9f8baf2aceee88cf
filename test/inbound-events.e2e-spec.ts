import { Repository } from 'typeorm';
import { Applied, InboundEventInbox, InboundEventNotApplied } from '../src/database/inbound-events';
import { PaymentEvent } from '../src/modules/billings/entities/payment-event.entity';
import { createTestApp, TestApp } from './support/test-app';

/**
 * The inbound-event pattern (src/database/inbound-events.ts) on the real database of the run:
 * stored before it is applied, deduped on its key, applied once, failures kept for the retry.
 * Exercised through the payment_events table, the first table built on it.
 */
describe('InboundEventInbox', () => {
  let t: TestApp;
  let repo: Repository<PaymentEvent>;
  let inbox: InboundEventInbox<PaymentEvent>;
  let n = 0;

  beforeAll(async () => {
    t = await createTestApp({ smtp: false });
    repo = t.dataSource.getRepository(PaymentEvent);
    inbox = new InboundEventInbox(repo, 'InboundEventsTest');
  });
  afterAll(async () => {
    await t.close();
  });

  const newEvent = (key = `key-${++n}`, webhookId: string | null = null) =>
    Object.assign(new PaymentEvent(), {
      eventKey: key,
      webhookId,
      raw: JSON.stringify({ key }),
      outcome: null,
      attempts: 0,
      lastError: null,
      appliedAt: null,
      externalId: null,
      gatewayInvoiceId: null,
      status: 'PAID',
      billingUuid: null,
    });

  /** An apply that counts its calls and records a billing uuid with its outcome. */
  const counting = (outcome = 'applied') => {
    const calls: string[] = [];
    const apply = (event: PaymentEvent): Promise<Applied<PaymentEvent>> => {
      calls.push(event.eventKey);
      return Promise.resolve({ outcome, record: { billingUuid: `billing-of-${event.eventKey}` } });
    };
    return { calls, apply };
  };

  it('stores the event, applies it once and records the outcome and the extra columns on its row', async () => {
    const { calls, apply } = counting();
    const received = await inbox.receive(newEvent('k-applied'), apply);
    expect(received.kind).toBe('applied');
    expect(calls).toEqual(['k-applied']);
    const row = await repo.findOneByOrFail({ eventKey: 'k-applied' });
    expect(row).toMatchObject({
      outcome: 'applied',
      attempts: 1,
      lastError: null,
      billingUuid: 'billing-of-k-applied',
    });
    expect(row.appliedAt).toBeInstanceOf(Date);
  });

  it('a copy (same key, or same webhook id) is a duplicate and is not applied again', async () => {
    const { calls, apply } = counting();
    await inbox.receive(newEvent('k-dup', 'hook-1'), apply);
    const sameKey = await inbox.receive(newEvent('k-dup'), apply);
    const sameHook = await inbox.receive(newEvent('k-other', 'hook-1'), apply);
    expect([sameKey.kind, sameHook.kind]).toEqual(['duplicate', 'duplicate']);
    expect(sameKey.kind === 'duplicate' && sameKey.event?.billingUuid).toBe('billing-of-k-dup');
    expect(calls).toEqual(['k-dup']);
    expect(await repo.countBy({ eventKey: 'k-dup' })).toBe(1);
    expect(await repo.countBy({ eventKey: 'k-other' })).toBe(0);
  });

  it('ten concurrent copies are stored once and applied once', async () => {
    const { calls, apply } = counting();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => inbox.receive(newEvent('k-race'), apply)),
    );
    expect(results.filter((r) => r.kind === 'applied')).toHaveLength(1);
    expect(calls).toEqual(['k-race']);
    expect(await repo.countBy({ eventKey: 'k-race' })).toBe(1);
  });

  it('a failed application keeps the event unapplied with its error; a redelivery or the retry job applies it', async () => {
    const failing = () => Promise.reject(new Error('database hiccup'));
    await expect(inbox.receive(newEvent('k-fail'), failing)).rejects.toBeInstanceOf(InboundEventNotApplied);
    expect(await repo.findOneByOrFail({ eventKey: 'k-fail' })).toMatchObject({
      outcome: null,
      attempts: 1,
      lastError: 'Error: database hiccup',
    });

    const { calls, apply } = counting();
    expect(await inbox.retryUnapplied(apply)).toBe(1);
    expect(calls).toEqual(['k-fail']);
    expect(await repo.findOneByOrFail({ eventKey: 'k-fail' })).toMatchObject({
      outcome: 'applied',
      attempts: 2,
      lastError: null,
    });

    // Applied now: the retry job finds nothing more, and a redelivery is a duplicate.
    expect(await inbox.retryUnapplied(apply)).toBe(0);
    expect((await inbox.receive(newEvent('k-fail'), apply)).kind).toBe('duplicate');
    expect(calls).toEqual(['k-fail']);
  });

  it('a redelivery of an event whose application failed applies it at once', async () => {
    await expect(
      inbox.receive(newEvent('k-redeliver'), () => Promise.reject(new Error('x'))),
    ).rejects.toThrow();
    const { calls, apply } = counting();
    const again = await inbox.receive(newEvent('k-redeliver'), apply);
    expect(again.kind).toBe('applied');
    expect(calls).toEqual(['k-redeliver']);
  });

  it('the retry job leaves alone an unapplied event that a request may still be applying (young, no error)', async () => {
    await repo.insert(newEvent('k-in-flight'));
    const { calls, apply } = counting();
    await inbox.retryUnapplied(apply);
    expect(calls).not.toContain('k-in-flight');
    expect((await repo.findOneByOrFail({ eventKey: 'k-in-flight' })).outcome).toBeNull();
  });

  it('an outcome other than "applied" never overwrites a record another copy already wrote', async () => {
    await expect(
      inbox.receive(newEvent('k-keep'), () => Promise.reject(new Error('first'))),
    ).rejects.toThrow();
    // While the redelivery applies it, another copy (the retry job, say) applies and records it first.
    const late = async (event: PaymentEvent): Promise<Applied<PaymentEvent>> => {
      await repo.update({ id: event.id }, { outcome: 'applied', billingUuid: 'by-the-other-copy' });
      return { outcome: 'ignored', record: { billingUuid: 'late' } };
    };
    await inbox.receive(newEvent('k-keep'), late);
    expect(await repo.findOneByOrFail({ eventKey: 'k-keep' })).toMatchObject({
      outcome: 'applied',
      billingUuid: 'by-the-other-copy',
    });
  });
});
