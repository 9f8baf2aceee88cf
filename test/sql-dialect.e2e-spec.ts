import { Client } from 'pg';
import { EntityManager, In } from 'typeorm';
import type { PostgresDataSourceOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions';
import { LOCK_NAMESPACE, lockKey, SqlDialect } from '../src/database/sql-dialect';
import { DatabaseRuntime } from '../src/database/database-runtime';
import { SqliteRuntime } from '../src/database/sqlite/sqlite-runtime';
import { TransactionService } from '../src/database/transaction.service';
import { CompanyUsageDay } from '../src/modules/companies/entities/company-usage-day.entity';
import { Company } from '../src/modules/companies/entities/company.entity';
import { CleanLog } from '../src/modules/log-index/entities/clean-log.entity';
import { DeliveryStatus, WebhookDelivery } from '../src/modules/webhooks/entities/webhook-delivery.entity';
import { WebhookEvent } from '../src/modules/webhooks/entities/webhook-event.entity';
import { Webhook } from '../src/modules/webhooks/entities/webhook.entity';
import { newEventId } from '../src/modules/webhooks/webhook-outbox';
import { createActiveUser } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';
import { latch, until } from './support/until';

/** Every operation of SqlDialect on the database of the run (SQLite, or PostgreSQL with DATABASE_URL). */
describe('SqlDialect', () => {
  let t: TestApp;
  let dialect: SqlDialect;
  let transactions: TransactionService;
  let runtime: DatabaseRuntime;
  let company: Company;

  beforeAll(async () => {
    // The claim specs' deliveries are due: the app's own dispatcher must not take them meanwhile.
    t = await createTestApp({ env: { WEBHOOK_DISPATCHER: 'false' } });
    dialect = t.app.get(SqlDialect);
    transactions = t.app.get(TransactionService);
    runtime = t.app.get(DatabaseRuntime);
    const user = await createActiveUser(t);
    company = await t.dataSource.getRepository(Company).findOneByOrFail({ uuid: user.companyUuid });
  });
  afterAll(async () => {
    await t.close();
  });

  const usage = () =>
    t.dataSource
      .getRepository(CompanyUsageDay)
      .find({ where: { companyId: company.id }, order: { day: 'ASC' } })
      .then((rows) => rows.map((r) => [r.day, r.count]));

  /** True once a transaction waits: on a row lock (PostgreSQL), or to begin at all (SQLite, one at a time). */
  async function aTransactionWaits(): Promise<boolean> {
    if (runtime instanceof SqliteRuntime) return runtime.gate.waiting > 0;
    const [{ n }] = await t.dataSource.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE NOT l.granted AND a.datname = current_database()`,
    );
    return n > 0;
  }

  it('knows the database of the run', () => {
    expect(dialect.isPostgres).toBe(Boolean(process.env.DATABASE_URL));
  });

  describe.each([
    [
      'forUpdate',
      (em: EntityManager) =>
        dialect
          .forUpdate(em.getRepository(Company).createQueryBuilder('company').where({ id: company.id }))
          .getOne(),
    ],
    [
      'lockRows',
      (em: EntityManager) =>
        dialect.lockRows(em.getRepository(Company).createQueryBuilder('company').where({ id: company.id })),
    ],
    [
      'findIn with forUpdate',
      (em: EntityManager) =>
        dialect.findIn(em, Company, { in: { id: [company.id] } }, ['id'], { forUpdate: true }),
    ],
  ])('%s', (_name, lock) => {
    it('makes a second transaction that locks the same row wait for the first to end', async () => {
      const events: string[] = [];
      const locked = latch();
      const held = latch();
      const first = transactions.run(async (em) => {
        await lock(em);
        events.push('first locked');
        locked.open();
        await held.wait;
        events.push('first ends');
      });
      await Promise.race([locked.wait, first]);
      const second = transactions.run(async (em) => {
        await lock(em);
        events.push('second locked');
      });
      // Until the second waits, or (were the lock no lock) has locked too.
      await until(
        async () => events.includes('second locked') || (await aTransactionWaits()),
        'the second transaction waits',
      );
      expect(events).toEqual(['first locked']);
      held.open();
      await Promise.all([first, second]);
      expect(events).toEqual(['first locked', 'first ends', 'second locked']);
    });
  });

  it('forUpdate still reads the rows', async () => {
    const found = await transactions.run((em) =>
      dialect
        .forUpdate(em.getRepository(Company).createQueryBuilder('company').where({ id: company.id }))
        .getOne(),
    );
    expect(found?.uuid).toBe(company.uuid);
  });

  describe('insertIgnoringDuplicates', () => {
    const row = (day: string, count: number) => ({ companyId: company.id, day, count });

    beforeEach(async () => {
      await t.dataSource.getRepository(CompanyUsageDay).delete({ companyId: company.id });
    });

    it('inserts the new rows, keeps the existing ones as they are, and counts only what it inserted', async () => {
      const em = t.dataSource.manager;
      expect(await dialect.insertIgnoringDuplicates(em, CompanyUsageDay, [row('2026-01-01', 1)])).toBe(1);
      const inserted = await dialect.insertIgnoringDuplicates(em, CompanyUsageDay, [
        row('2026-01-01', 9),
        row('2026-01-02', 2),
        row('2026-01-03', 3),
      ]);
      expect(inserted).toBe(2);
      expect(await usage()).toEqual([
        ['2026-01-01', 1],
        ['2026-01-02', 2],
        ['2026-01-03', 3],
      ]);
      expect(await dialect.insertIgnoringDuplicates(em, CompanyUsageDay, [])).toBe(0);
    });

    it('runs inside the transaction of the manager it is given', async () => {
      await expect(
        transactions.run(async (em) => {
          expect(await dialect.insertIgnoringDuplicates(em, CompanyUsageDay, [row('2026-02-01', 1)])).toBe(1);
          throw new Error('rolled back on purpose');
        }),
      ).rejects.toThrow('rolled back on purpose');
      expect(await usage()).toEqual([]);
    });

    it('counts each row once when two callers insert the same keys at the same time', async () => {
      const rows = [row('2026-03-01', 1), row('2026-03-02', 1)];
      const counts = await Promise.all(
        Array.from({ length: 4 }, () =>
          transactions.run((em) => dialect.insertIgnoringDuplicates(em, CompanyUsageDay, rows)),
        ),
      );
      expect(counts.reduce((a, b) => a + b, 0)).toBe(2);
    });
  });

  describe('insertMany', () => {
    /** Values that a text encoding of parameters (a VALUES list, or PostgreSQL array literals) could get wrong. */
    const awkward = [
      '"quoted"',
      'back\\slash',
      'both \\"\\\\',
      'line\nbreak\ttab',
      '{braces, comma}',
      'NULL',
      '',
      ' spaced ',
      'ünï 😀',
      "it's",
    ];
    const log = (n: number, overrides: Partial<CleanLog> = {}): CleanLog => ({
      id: `insert-many-${n}`,
      companyId: n % 2 ? company.id : null,
      companyUuid: n % 2 ? company.uuid : null,
      host: 'mx1',
      queueId: `Q${n}`,
      messageId: n % 3 ? `<${n}@example.com>` : null,
      from: awkward[n % awkward.length],
      senderDomain: null,
      to: `r${n}@example.net`,
      origTo: null,
      status: 'sent',
      dsn: '2.0.0',
      response: awkward[(n + 3) % awkward.length],
      relay: null,
      delay: n % 2 ? 0.25 * n : null,
      size: n * 1000,
      clientIp: null,
      saslUsername: null,
      remoteQueueId: null,
      attempts: n,
      opened: n % 2 === 0,
      clicked: false,
      firstSeenAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)),
      lastEventAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n, 123)),
      events: [
        { at: '2026-01-01T00:00:00.000Z', status: 'sent', dsn: null, response: awkward[n % awkward.length] },
      ],
      emailId: null,
      provider: 'other',
      bounceType: null,
      bounceCategory: null,
      bounceRule: null,
      ...overrides,
    });
    const stored = () =>
      t.dataSource
        .getRepository(CleanLog)
        .createQueryBuilder('log')
        .where("log.id LIKE 'insert-many-%'")
        .orderBy('log.attempts', 'ASC')
        .getMany();

    beforeEach(async () => {
      await t.dataSource
        .getRepository(CleanLog)
        .createQueryBuilder()
        .delete()
        .where("id LIKE 'insert-many-%'")
        .execute();
    });

    it('stores every value as given, awkward text, nulls, numbers, booleans and dates included', async () => {
      const rows = Array.from({ length: 40 }, (_, n) => log(n));
      const inserted = await dialect.insertMany(t.dataSource.manager, CleanLog, rows, 'ignore');
      expect(inserted).toBe(40);
      expect(await stored()).toEqual(rows);
    });

    it('stores columns of text and nulls with neither backslashes nor control characters as given', async () => {
      // On PostgreSQL such a column is written through JSON (pgArray); the others value by value.
      const printable = awkward.filter((text) => !/[\\\n\t]/.test(text));
      expect(printable).toHaveLength(7);
      const rows = Array.from({ length: 21 }, (_, n) =>
        log(n, {
          from: printable[n % printable.length],
          response: n % 4 ? printable[(n + 3) % printable.length] : null,
          events: [{ at: '2026-01-01T00:00:00.000Z', status: 'sent', dsn: null, response: printable[n % 7] }],
        }),
      );
      expect(await dialect.insertMany(t.dataSource.manager, CleanLog, rows, 'ignore')).toBe(21);
      expect(await stored()).toEqual(rows);
    });

    it('skips existing keys with ignore, and overwrites only the named fields with an update', async () => {
      const em = t.dataSource.manager;
      await dialect.insertMany(em, CleanLog, [log(1), log(2)], 'ignore');
      expect(await dialect.insertMany(em, CleanLog, [log(1, { status: 'bounced' }), log(3)], 'ignore')).toBe(
        1,
      );
      expect((await stored()).map((r) => [r.id, r.status])).toEqual([
        ['insert-many-1', 'sent'],
        ['insert-many-2', 'sent'],
        ['insert-many-3', 'sent'],
      ]);
      const updated = await dialect.insertMany(
        em,
        CleanLog,
        [log(2, { status: 'bounced', response: 'changed', host: 'not-updated' }), log(4)],
        { key: ['id'], update: ['status', 'response'] },
      );
      expect(updated).toBe(2);
      const after = await stored();
      expect(after.map((r) => [r.id, r.status, r.response, r.host])).toEqual([
        ['insert-many-1', 'sent', log(1).response, 'mx1'],
        ['insert-many-2', 'bounced', 'changed', 'mx1'],
        ['insert-many-3', 'sent', log(3).response, 'mx1'],
        ['insert-many-4', 'sent', log(4).response, 'mx1'],
      ]);
    });

    it('none inserts new rows as given, and a taken key fails the statement, leaving the rows as they were', async () => {
      const em = t.dataSource.manager;
      expect(await dialect.insertMany(em, CleanLog, [log(1), log(2)], 'none')).toBe(2);
      await expect(
        dialect.insertMany(em, CleanLog, [log(3), log(2, { status: 'bounced' })], 'none'),
      ).rejects.toThrow(/unique|duplicate/i);
      expect(await stored()).toEqual([log(1), log(2)]);
    });

    it('insertNew answers the keys of the rows it inserted, and only those', async () => {
      const em = t.dataSource.manager;
      await dialect.insertMany(em, CleanLog, [log(1)], 'ignore');
      const fresh = await dialect.insertNew(em, CleanLog, [log(1), log(2), log(3)], 'id');
      expect(fresh.sort()).toEqual(['insert-many-2', 'insert-many-3']);
      expect(await dialect.insertNew(em, CleanLog, [log(2), log(3)], 'id')).toEqual([]);
      expect(await dialect.insertNew(em, CleanLog, [], 'id')).toEqual([]);
      expect((await stored()).map((r) => r.id)).toEqual(['insert-many-1', 'insert-many-2', 'insert-many-3']);
    });

    it('findIn reads the rows whose columns hold one of the listed values, as TypeORM reads them', async () => {
      const em = t.dataSource.manager;
      const rows = Array.from({ length: 40 }, (_, n) => log(n));
      await dialect.insertMany(em, CleanLog, rows, 'ignore');
      const byId = (found: Array<{ id: string }>) => [...found].sort((a, b) => a.id.localeCompare(b.id));
      const ids = [1, 2, 3, 17].map((n) => `insert-many-${n}`);
      // Every field, awkward text, dates, booleans, numbers and the JSON of the events included.
      expect(byId(await dialect.findIn(em, CleanLog, { in: { id: ids } }))).toEqual(
        byId(await t.dataSource.getRepository(CleanLog).findBy({ id: In(ids) })),
      );
      // Two lists at once, a NULL column, and only the fields asked for.
      const found = await dialect.findIn(
        em,
        CleanLog,
        { in: { host: ['mx1', 'mx9'], attempts: [3, 4, 5, 6] }, isNull: ['messageId'] },
        ['id', 'to', 'lastEventAt'],
      );
      expect(byId(found)).toEqual([
        { id: 'insert-many-3', to: 'r3@example.net', lastEventAt: rows[3].lastEventAt },
        { id: 'insert-many-6', to: 'r6@example.net', lastEventAt: rows[6].lastEventAt },
      ]);
      // A value that has the shape of a list element's syntax matches only itself.
      expect(
        await dialect.findIn(em, CleanLog, { in: { from: ['"quoted"', '{braces, comma}'] } }, ['id']),
      ).toHaveLength(rows.filter((r) => r.from === '"quoted"' || r.from === '{braces, comma}').length);
      expect(await dialect.findIn(em, CleanLog, { in: { id: ['insert-many-999'] } })).toEqual([]);
      // In the order of a field when asked, and still read (locked on PostgreSQL) with forUpdate.
      const ordered = (orderBy: 'attempts' | 'lastEventAt') =>
        transactions.run((tx) =>
          dialect.findIn(tx, CleanLog, { in: { attempts: [17, 3, 30, 8] } }, ['attempts'], {
            orderBy,
            forUpdate: true,
          }),
        );
      expect((await ordered('attempts')).map((r) => r.attempts)).toEqual([3, 8, 17, 30]);
      expect((await ordered('lastEventAt')).map((r) => r.attempts)).toEqual([3, 8, 17, 30]);
    });

    it('writes batches larger than one statement takes', async () => {
      const rows = Array.from({ length: 6_000 }, (_, n) => log(n));
      expect(await dialect.insertMany(t.dataSource.manager, CleanLog, rows, 'ignore')).toBe(6_000);
      expect(await t.dataSource.getRepository(CleanLog).count()).toBeGreaterThanOrEqual(6_000);
      expect((await stored()).at(-1)).toEqual(rows.at(-1));
    });
  });

  describe('addToCounters', () => {
    beforeEach(async () => {
      await t.dataSource.getRepository(CompanyUsageDay).delete({ companyId: company.id });
    });

    it('creates the row at the first count and adds to it afterwards, atomically', async () => {
      const add = (day: string, count: number) =>
        dialect.addToCounters(t.dataSource.manager, CompanyUsageDay, [
          { key: { companyId: company.id, day }, add: { count } },
        ]);
      await add('2026-04-01', 3);
      await Promise.all(Array.from({ length: 20 }, () => add('2026-04-01', 2)));
      await add('2026-04-02', 5);
      expect(await usage()).toEqual([
        ['2026-04-01', 43],
        ['2026-04-02', 5],
      ]);
    });
    it('adds to several rows in one call, and concurrent calls in any order neither lose a count nor deadlock', async () => {
      const days = ['2026-05-01', '2026-05-02', '2026-05-03', '2026-05-04'];
      const addAll = (order: string[], count: number) =>
        transactions.run((em) =>
          dialect.addToCounters(
            em,
            CompanyUsageDay,
            order.map((day) => ({ key: { companyId: company.id, day }, add: { count } })),
          ),
        );
      await addAll(days, 1);
      await Promise.all(Array.from({ length: 12 }, (_, i) => addAll(i % 2 ? [...days].reverse() : days, 2)));
      expect(await usage()).toEqual(days.map((day) => [day, 25]));
      await dialect.addToCounters(t.dataSource.manager, CompanyUsageDay, []);
      expect(await usage()).toEqual(days.map((day) => [day, 25]));
    });
  });

  describe('claimPerGroup and updateEach', () => {
    let webhooks: Webhook[];
    let eventId: number;
    const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second));
    const deliveries = () =>
      t.dataSource
        .getRepository(WebhookDelivery)
        .find({ where: { webhookId: In(webhooks.map((w) => w.id)) }, order: { id: 'ASC' } });
    /** `count` pending deliveries of endpoint `w`, due at seconds 0, 1, 2, … */
    const pending = (w: Webhook, count: number, status: DeliveryStatus = 'pending') =>
      t.dataSource.getRepository(WebhookDelivery).save(
        Array.from({ length: count }, (_, n) =>
          t.dataSource.getRepository(WebhookDelivery).create({
            webhookId: w.id,
            eventId,
            type: 'email.sent',
            recordId: null,
            seq: null,
            status,
            attempts: 0,
            nextAttemptAt: at(count - n),
          }),
        ),
      );
    const claim = (
      em: EntityManager,
      groups: Array<{ value: number; limit: number }>,
      total: number,
      token: string,
    ) =>
      dialect.claimPerGroup(em, WebhookDelivery, {
        group: 'webhookId',
        groups,
        ready: "q.status = 'pending' AND q.next_attempt_at <= :now",
        parameters: { now: at(30) },
        order: ['nextAttemptAt', 'id'],
        total,
        set: { claim: token, nextAttemptAt: at(90) },
      });

    beforeEach(async () => {
      await t.dataSource.getRepository(Webhook).delete({ companyId: company.id });
      webhooks = await t.dataSource.getRepository(Webhook).save(
        [0, 1, 2].map((n) =>
          t.dataSource.getRepository(Webhook).create({
            companyId: company.id,
            url: `https://hooks${n}.example.com/`,
            events: ['email.sent'],
            domains: [],
            secret: 'sealed',
          }),
        ),
      );
      const event = await t.dataSource.getRepository(WebhookEvent).save({
        eventId: newEventId(),
        companyId: company.id,
        type: 'email.sent',
        payload: '{}',
        recordId: null,
        seq: null,
        factKey: null,
      });
      eventId = event.id;
    });

    it('takes each group’s first ready rows up to its limit, first rows of every group before later ones, and marks them', async () => {
      const [a, b, c] = webhooks;
      const rowsA = await pending(a, 5);
      const rowsB = await pending(b, 2);
      await pending(c, 3, 'delivered');
      const ids = await transactions.run((em) =>
        claim(
          em,
          [
            { value: a.id, limit: 3 },
            { value: b.id, limit: 3 },
            { value: c.id, limit: 3 },
          ],
          4,
          'token-1',
        ),
      );
      // a's rows fall due latest-created first: its two earliest-due are its last two rows.
      expect(new Set(ids)).toEqual(new Set([rowsA[4].id, rowsA[3].id, rowsB[1].id, rowsB[0].id]));
      const after = await deliveries();
      const claimed = after.filter((d) => d.claim === 'token-1');
      expect(claimed.map((d) => d.id).sort((x, y) => x - y)).toEqual([...ids].sort((x, y) => x - y));
      expect(claimed.every((d) => d.nextAttemptAt?.getTime() === at(90).getTime())).toBe(true);
      expect(after.filter((d) => d.claim === null)).toHaveLength(6);

      // What is claimed is no longer ready; a group with no room gives nothing.
      const next = await transactions.run((em) =>
        claim(
          em,
          [
            { value: a.id, limit: 10 },
            { value: b.id, limit: 0 },
          ],
          10,
          'token-2',
        ),
      );
      expect(new Set(next)).toEqual(new Set([rowsA[0].id, rowsA[1].id, rowsA[2].id]));
      expect(await transactions.run((em) => claim(em, [{ value: a.id, limit: 10 }], 10, 'token-3'))).toEqual(
        [],
      );
    });

    it('updateEach gives each matching row its own values and answers only the rows it found', async () => {
      const [a, b] = webhooks;
      const rows = [...(await pending(a, 2)), ...(await pending(b, 1))];
      await transactions.run((em) =>
        claim(
          em,
          [
            { value: a.id, limit: 5 },
            { value: b.id, limit: 5 },
          ],
          5,
          'mine',
        ),
      );
      const awkward = ['it\'s "quoted"', 'ünï 😀', ''];
      const updated = await transactions.run((em) =>
        dialect.updateEach(
          em,
          WebhookDelivery,
          rows.map((row, n) => ({
            // The last row's claim is another's: it is not touched.
            match: { id: row.id, claim: n === 2 ? 'theirs' : 'mine' },
            set: {
              status: 'delivered' as const,
              attempts: n + 1,
              lastBody: awkward[n],
              lastAttemptAt: at(40 + n),
              claim: null,
            },
          })),
          'webhookId',
        ),
      );
      expect(updated).toEqual([a.id, a.id]);
      const after = await deliveries();
      expect(
        after.map((d) => [d.status, d.attempts, d.lastBody, d.lastAttemptAt?.toISOString() ?? null, d.claim]),
      ).toEqual([
        ['delivered', 1, awkward[0], at(40).toISOString(), null],
        ['delivered', 2, awkward[1], at(41).toISOString(), null],
        ['pending', 0, null, null, 'mine'],
      ]);
    });

    it('updateEach with isNull passes over the rows whose field is not NULL', async () => {
      const [a] = webhooks;
      const [free, taken] = await pending(a, 2);
      await t.dataSource.getRepository(WebhookDelivery).update({ id: taken.id }, { claim: 'theirs' });
      const updated = await transactions.run((em) =>
        dialect.updateEach(
          em,
          WebhookDelivery,
          [free, taken].map((row) => ({ match: { id: row.id }, set: { claim: 'mine', attempts: 7 } })),
          'id',
          { isNull: ['claim'] },
        ),
      );
      expect(updated).toEqual([free.id]);
      expect((await deliveries()).map((d) => [d.id, d.claim, d.attempts])).toEqual([
        [free.id, 'mine', 7],
        [taken.id, 'theirs', 0],
      ]);
    });

    it('updateEach adds `add` fields to each row’s own value, concurrent additions all kept', async () => {
      const [a, b] = webhooks;
      const rows = [...(await pending(a, 1)), ...(await pending(b, 1))];
      await Promise.all(
        [1, 2, 3].map((n) =>
          transactions.run((em) =>
            dialect.updateEach(
              em,
              WebhookDelivery,
              rows.map((row, i) => ({
                match: { id: row.id },
                set: { lastBody: `last ${i}` },
                add: { attempts: n * (i + 1) },
              })),
              'id',
            ),
          ),
        ),
      );
      const after = await deliveries();
      expect(after.map((d) => [d.attempts, d.lastBody])).toEqual([
        [6, 'last 0'],
        [12, 'last 1'],
      ]);
    });

    it('claimReady takes the first ready rows in order, a value given as SQL computed for each row', async () => {
      const [a, b] = webhooks;
      const waiting = await pending(a, 3);
      const failed = await pending(b, 1, 'failed');
      await pending(b, 1, 'delivered');
      const ids = await transactions.run((em) =>
        dialect.claimReady(em, WebhookDelivery, {
          ready: "q.status IN ('pending', 'failed') AND q.next_attempt_at <= :now",
          parameters: { now: at(30) },
          order: ['nextAttemptAt', 'id'],
          total: 3,
          set: {
            claim: 'ready-1',
            status: () => "CASE WHEN status = 'failed' THEN 'pending' ELSE status END",
            lastBody: () => "'from ' || status",
          },
        }),
      );
      // Due at seconds 1 (a's last row, b's failed one), 2 (a's middle row), 3 (a's first).
      expect(new Set(ids)).toEqual(new Set([waiting[2].id, failed[0].id, waiting[1].id]));
      const after = await deliveries();
      expect(after.filter((d) => d.claim === 'ready-1').map((d) => [d.id, d.status, d.lastBody])).toEqual(
        [
          [waiting[1].id, 'pending', 'from pending'],
          [waiting[2].id, 'pending', 'from pending'],
          [failed[0].id, 'pending', 'from failed'],
        ].sort((x, y) => Number(x[0]) - Number(y[0])),
      );
      expect(after.filter((d) => d.claim === null)).toHaveLength(2);
    });

    const onPostgres = process.env.DATABASE_URL ? it : it.skip;
    onPostgres(
      'passes over the rows another transaction is claiming instead of waiting for them',
      async () => {
        const [a] = webhooks;
        await pending(a, 4);
        const held = latch();
        const claimedFirst = latch();
        const first = transactions.run(async (em) => {
          const ids = await claim(em, [{ value: a.id, limit: 2 }], 2, 'first');
          claimedFirst.open();
          await held.wait;
          return ids;
        });
        await claimedFirst.wait;
        const second = await transactions.run((em) => claim(em, [{ value: a.id, limit: 4 }], 4, 'second'));
        held.open();
        const firstIds = await first;
        expect(firstIds).toHaveLength(2);
        expect(second).toHaveLength(2);
        expect(second.filter((id) => firstIds.includes(id))).toEqual([]);
      },
    );
  });

  describe('utcPeriod', () => {
    it.each([
      ['2026-01-31T23:30:00.000Z', '2026-01-31', '2026-01'],
      // 23:30 at -02:00 is already the next day, and month, in UTC.
      ['2026-01-31T23:30:00.000-02:00', '2026-02-01', '2026-02'],
      ['2026-12-31T00:00:00.000+05:00', '2026-12-30', '2026-12'],
    ])('%s is day %s and month %s in UTC', async (at, day, month) => {
      await t.dataSource.getRepository(Company).update({ id: company.id }, { periodEnd: new Date(at) });
      const row = await t.dataSource
        .getRepository(Company)
        .createQueryBuilder('company')
        .select(dialect.utcPeriod('company.period_end', 'day'), 'day')
        .addSelect(dialect.utcPeriod('company.period_end', 'month'), 'month')
        .where({ id: company.id })
        .getRawOne<{ day: string; month: string }>();
      expect(row).toEqual({ day, month });
    });
  });

  describe('withNamedLock', () => {
    it('runs the work and answers its result', async () => {
      await expect(dialect.withNamedLock('dialect-test', () => Promise.resolve(7))).resolves.toEqual({
        acquired: true,
        result: 7,
      });
    });

    it('passes the work’s failure on', async () => {
      await expect(
        dialect.withNamedLock('dialect-test', () => Promise.reject(new Error('work failed'))),
      ).rejects.toThrow('work failed');
    });

    const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;
    onPostgres('on PostgreSQL, against another session (another replica)', () => {
      let other: Client;
      const keys = (name: string) => [LOCK_NAMESPACE, lockKey(name)];
      const tryLock = async (name: string) =>
        (await other.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS locked', keys(name)))
          .rows[0].locked;

      beforeAll(async () => {
        other = new Client({ connectionString: (t.dataSource.options as PostgresDataSourceOptions).url });
        await other.connect();
      });
      afterAll(async () => {
        await other.end();
      });

      it('skips the work while the other session holds the lock, and only that lock', async () => {
        expect(await tryLock('held-elsewhere')).toBe(true);
        try {
          let ran = false;
          const outcome = await dialect.withNamedLock('held-elsewhere', () => Promise.resolve((ran = true)));
          expect([outcome, ran]).toEqual([{ acquired: false }, false]);
          await expect(dialect.withNamedLock('another-name', () => Promise.resolve(1))).resolves.toEqual({
            acquired: true,
            result: 1,
          });
        } finally {
          await other.query('SELECT pg_advisory_unlock($1, $2)', keys('held-elsewhere'));
        }
      });

      it('holds the lock during the work and releases it afterwards, also after a failure', async () => {
        const during = await dialect.withNamedLock('held-here', () => tryLock('held-here'));
        expect(during).toEqual({ acquired: true, result: false });
        await expect(
          dialect.withNamedLock('held-here', () => Promise.reject(new Error('work failed'))),
        ).rejects.toThrow('work failed');
        expect(await tryLock('held-here')).toBe(true);
        await other.query('SELECT pg_advisory_unlock($1, $2)', keys('held-here'));
      });
    });
  });
});
