import { Client } from '@elastic/elasticsearch';
import type { CleanRecord } from '../src/modules/log-index/clean-record';
import { ElasticsearchLogIndex } from '../src/modules/log-index/elasticsearch-log-index';
import { LogIndex } from '../src/modules/log-index/log-index';
import { TransactionService } from '../src/database/transaction.service';
import { createTestApp, TestApp } from './support/test-app';

/**
 * One contract for both LogIndex implementations (integrations.md "Clean-log index"): always
 * against the SQL index (on the database the suite runs on), and against a real Elasticsearch
 * when ELASTICSEARCH_NODE is set. None runs on these machines, so there the Elasticsearch run is
 * skipped with this reason, and the adapter's requests are tested against
 * @elastic/elasticsearch-mock (src/modules/log-index/elasticsearch-log-index.spec.ts).
 */
const DAY = 86_400_000;
const base = Date.UTC(2026, 10, 2, 12, 0, 0);
const COMPANY = 9_000_001;
const OTHER = 9_000_002;

function record(n: number, overrides: Partial<CleanRecord>): CleanRecord {
  return {
    id: n.toString(16).padStart(64, '0'),
    companyId: COMPANY,
    companyUuid: '5f0c6f1e-8d3a-4a57-9a43-1b2c3d4e5f60',
    host: 'relay1',
    queueId: `Q${n.toString(16).toUpperCase().padStart(9, '0')}`,
    messageId: `m${n}@acme.example`,
    from: 'news@acme.example',
    senderDomain: 'acme.example',
    to: `user${n}@example.net`,
    origTo: null,
    status: 'sent',
    dsn: '2.0.0',
    response: '250 Ok',
    relay: 'mx[10.0.0.1]:25',
    delay: 0.5,
    size: 100,
    clientIp: '1.2.3.4',
    saslUsername: 'r-contract',
    remoteQueueId: `R${n}`,
    attempts: 1,
    opened: false,
    clicked: false,
    firstSeenAt: new Date(base - DAY),
    lastEventAt: new Date(base - n * 60_000),
    events: [
      { at: new Date(base - n * 60_000).toISOString(), status: 'sent', dsn: '2.0.0', response: '250 Ok' },
    ],
    emailId: null,
    provider: 'other',
    bounceType: null,
    bounceCategory: null,
    bounceRule: null,
    ...overrides,
  };
}

const RECORDS: CleanRecord[] = [
  record(1, { opened: true }),
  record(2, { status: 'delivered', clicked: true, opened: true }),
  record(3, {
    status: 'bounced',
    dsn: '5.1.1',
    response: '550 5.1.1 No such user',
    to: 'gone@bounce.example',
  }),
  record(4, { status: 'deferred', dsn: '4.2.0', lastEventAt: new Date(base - DAY) }),
  record(5, { senderDomain: 'other.example', from: 'a@other.example' }),
  record(6, { companyId: OTHER, companyUuid: null }),
];

const window = { from: new Date(Date.UTC(2026, 10, 1)), toExclusive: new Date(Date.UTC(2026, 10, 3)) };

function contract(
  name: string,
  setup: () => Promise<{
    index: LogIndex;
    write: (r: CleanRecord[]) => Promise<void>;
    close: () => Promise<void>;
  }>,
) {
  describe(`LogIndex contract: ${name}`, () => {
    let index: LogIndex;
    let write: (r: CleanRecord[]) => Promise<void>;
    let close: () => Promise<void>;

    beforeAll(async () => {
      const made = await setup();
      index = made.index;
      write = made.write;
      close = made.close;
      await made.write(RECORDS);
      // Writing the same records again is an idempotent upsert.
      await made.write(RECORDS);
    }, 60_000);
    afterAll(() => close());

    it('reads records back whole by id', async () => {
      const [one] = await index.getMany([RECORDS[1].id]);
      expect(one).toEqual(RECORDS[1]);
      expect(await index.getMany(['f'.repeat(64)])).toEqual([]);
    });

    it('locates the records of provider events (message id or remote id, with the recipient)', async () => {
      const found = await index.locate([
        { recipient: 'user1@example.net', remoteQueueId: 'R1' },
        { recipient: 'user2@example.net', messageId: 'm2@acme.example' },
        { recipient: 'someone@else.example', remoteQueueId: 'R5' },
      ]);
      expect(found.map((f) => f.id).sort()).toEqual([RECORDS[0].id, RECORDS[1].id].sort());
      expect(found.find((f) => f.id === RECORDS[0].id)).toEqual({
        id: RECORDS[0].id,
        host: 'relay1',
        queueId: RECORDS[0].queueId,
        recipient: 'user1@example.net',
        messageId: RECORDS[0].messageId,
        companyId: RECORDS[0].companyId,
      });
    });

    it('counts a window by day and status, with the opened and clicked flags', async () => {
      const days = await index.countsByDay({ ...window, companyId: COMPANY });
      const byDay = Object.fromEntries(days.map((d) => [d.day, d.counts]));
      expect(byDay['2026-11-01']).toMatchObject({ processed: 1, deferred: 1 });
      expect(byDay['2026-11-02']).toMatchObject({
        processed: 4,
        sent: 2,
        delivered: 1,
        bounced: 1,
        opened: 2,
        clicked: 1,
      });
    });

    it('groups by sender domain and by company', async () => {
      const domains = await index.countsBy({ ...window, companyId: COMPANY }, 'senderDomain');
      expect(domains.map((g) => [g.key, g.counts.processed]).sort()).toEqual([
        ['acme.example', 4],
        ['other.example', 1],
      ]);
      const companies = await index.countsBy({ ...window, companyId: 'all' }, 'companyId');
      expect(companies.map((g) => [Number(g.key), g.counts.processed]).sort()).toEqual([
        [COMPANY, 5],
        [OTHER, 1],
      ]);
    });

    it('breaks bounces down by DSN and recipient domain', async () => {
      expect(await index.bounces({ ...window, companyId: COMPANY }, 20)).toEqual({
        reasons: [{ dsn: '5.1.1', count: 1, example: '550 5.1.1 No such user' }],
        domains: [{ domain: 'bounce.example', count: 1 }],
      });
    });

    it('searches newest first, pages after a position, filters', async () => {
      const first = await index.search({ ...window, companyId: COMPANY }, 2);
      expect(first.total).toBe(5);
      expect(first.items.map((r) => r.id)).toEqual([RECORDS[0].id, RECORDS[1].id]);
      const last = first.items[1];
      const next = await index.search({ ...window, companyId: COMPANY }, 10, {
        at: last.lastEventAt,
        id: last.id,
      });
      expect(next.items.map((r) => r.id)).toEqual([RECORDS[2].id, RECORDS[4].id, RECORDS[3].id]);
      const searched = await index.search({ ...window, companyId: COMPANY, search: 'GONE@' }, 10);
      expect(searched.items.map((r) => r.to)).toEqual(['gone@bounce.example']);
    });

    it('streams every record of a filter in order, without events', async () => {
      const seen: CleanRecord[] = [];
      for await (const batch of index.stream({ ...window, companyId: COMPANY }, 1_000_000))
        seen.push(...batch);
      expect(seen.map((r) => r.id)).toEqual(
        [RECORDS[0], RECORDS[1], RECORDS[2], RECORDS[4], RECORDS[3]].map((r) => r.id),
      );
      expect(seen[0]).toEqual({ ...RECORDS[0], events: [] });
    });

    it('streams across pages: every record once, newest first, also among records of one time', async () => {
      // October, outside the window of the other tests; runs of ten records share a time.
      const october = Date.UTC(2026, 9, 15);
      const many = Array.from({ length: 1_203 }, (_, i) =>
        record(100_000 + i, { lastEventAt: new Date(october - Math.floor(i / 10) * 1000) }),
      );
      await write(many);
      const seen: string[] = [];
      const filter = {
        from: new Date(Date.UTC(2026, 9, 1)),
        toExclusive: new Date(Date.UTC(2026, 9, 31)),
        companyId: COMPANY,
      };
      for await (const batch of index.stream(filter, 1_000_000)) seen.push(...batch.map((r) => r.id));
      const expected = [...many]
        .sort((a, b) => b.lastEventAt.getTime() - a.lastEventAt.getTime() || (a.id < b.id ? 1 : -1))
        .map((r) => r.id);
      expect(seen).toEqual(expected);
      const capped: string[] = [];
      for await (const batch of index.stream(filter, 777)) capped.push(...batch.map((r) => r.id));
      expect(capped).toEqual(expected.slice(0, 777));
    }, 60_000);

    it('says it is up', async () => {
      await expect(index.isUp()).resolves.toBe(true);
    });
  });
}

contract('SQL (the service database)', async () => {
  const t: TestApp = await createTestApp();
  const index = t.app.get(LogIndex);
  const transactions = t.app.get(TransactionService);
  return {
    index,
    write: (records) => transactions.run((em) => index.write(records, undefined, em)),
    close: () => t.close(),
  };
});

if (process.env.ELASTICSEARCH_NODE) {
  contract('Elasticsearch (ELASTICSEARCH_NODE)', async () => {
    const client = new Client({ node: process.env.ELASTICSEARCH_NODE });
    const index = new ElasticsearchLogIndex(client);
    await index.ensureTemplate();
    return { index, write: (records) => index.write(records), close: () => client.close() };
  });
} else {
  describe.skip('LogIndex contract: Elasticsearch (skipped: ELASTICSEARCH_NODE is not set, no server runs here)', () => {
    it('runs against a real Elasticsearch when ELASTICSEARCH_NODE is set', () => undefined);
  });
}
