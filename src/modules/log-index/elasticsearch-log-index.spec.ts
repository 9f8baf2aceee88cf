import { Client, errors } from '@elastic/elasticsearch';
import type { CleanRecord } from './clean-record';
import { CLEAN_LOG_MAPPING, ElasticsearchLogIndex, indexOf, queryOf } from './elasticsearch-log-index';

// No Elasticsearch server runs on these machines: the client talks to @elastic/elasticsearch-mock,
// which checks the requests the adapter sends and answers as Elasticsearch would.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Mock = require('@elastic/elasticsearch-mock') as new () => ElasticMock;

interface ElasticMock {
  add(
    pattern: { method: string | string[]; path: string | string[] },
    fn: (params: MockParams) => unknown,
  ): void;
  getConnection(): unknown;
  clearAll(): void;
}
interface MockParams {
  method: string;
  path: string;
  body: unknown;
  querystring: Record<string, string>;
}

function record(overrides: Partial<CleanRecord> = {}): CleanRecord {
  return {
    id: 'a'.repeat(64),
    companyId: 7,
    companyUuid: '5f0c6f1e-8d3a-4a57-9a43-1b2c3d4e5f60',
    host: 'relay1',
    queueId: 'AA10A2839B',
    messageId: 'FB62@example.com',
    from: 'news@acme.example',
    senderDomain: 'acme.example',
    to: 'jo@Example.net',
    origTo: null,
    status: 'sent',
    dsn: '2.0.0',
    response: '250 2.0.0 Ok: queued as F12DF84004',
    relay: 'mx.example.net[10.0.0.1]:25',
    delay: 1.5,
    size: 920,
    clientIp: '1.2.3.4',
    saslUsername: 'r-7f3k2q9d',
    remoteQueueId: 'F12DF84004',
    attempts: 1,
    opened: false,
    clicked: false,
    firstSeenAt: new Date('2026-10-31T23:59:00Z'),
    lastEventAt: new Date('2026-11-01T00:01:00Z'),
    events: [{ at: '2026-11-01T00:01:00.000Z', status: 'sent', dsn: '2.0.0', response: '250 Ok' }],
    emailId: null,
    provider: 'other',
    bounceType: null,
    bounceCategory: null,
    bounceRule: null,
    ...overrides,
  };
}

const window = { from: new Date('2026-11-01T00:00:00Z'), toExclusive: new Date('2026-11-03T00:00:00Z') };

describe('ElasticsearchLogIndex (against @elastic/elasticsearch-mock)', () => {
  let mock: ElasticMock;
  let index: ElasticsearchLogIndex;

  beforeEach(() => {
    mock = new Mock();
    const client = new Client({ node: 'http://localhost:9200', Connection: mock.getConnection() as never });
    index = new ElasticsearchLogIndex(client);
  });

  it('installs the index template: monthly indices behind the alias, an explicit mapping', async () => {
    let sent: MockParams | undefined;
    mock.add({ method: 'PUT', path: '/_index_template/clean-logs' }, (params) => {
      sent = params;
      return { acknowledged: true };
    });
    await index.ensureTemplate();
    expect(sent?.body).toEqual({
      index_patterns: ['clean-logs-*'],
      template: {
        settings: { number_of_shards: 1 },
        mappings: CLEAN_LOG_MAPPING,
        aliases: { 'clean-logs': {} },
      },
    });
    expect(CLEAN_LOG_MAPPING.properties).toMatchObject({
      id: { type: 'keyword' },
      to: { type: 'keyword' },
      status: { type: 'keyword' },
      response: { type: 'text' },
      lastEventAt: { type: 'date' },
      events: { type: 'object', enabled: false },
    });
  });

  it('writes with one _bulk request: deterministic _ids, the month of the first sighting, refresh wait_for', async () => {
    let sent: MockParams | undefined;
    mock.add({ method: 'POST', path: '/_bulk' }, (params) => {
      sent = params;
      return {
        took: 1,
        errors: false,
        items: [{ index: { _id: 'a', status: 201 } }, { index: { _id: 'b', status: 200 } }],
      };
    });
    const second = record({ id: 'b'.repeat(64), firstSeenAt: new Date('2026-11-15T10:00:00Z') });
    await index.write([record(), second]);
    expect(sent?.querystring).toMatchObject({ refresh: 'wait_for' });
    const lines = sent?.body as Array<Record<string, unknown>>;
    expect(lines[0]).toEqual({ index: { _index: 'clean-logs-2026.10', _id: 'a'.repeat(64) } });
    expect(lines[1]).toMatchObject({
      id: 'a'.repeat(64),
      status: 'sent',
      toDomain: 'example.net',
      firstSeenAt: '2026-10-31T23:59:00.000Z',
      lastEventAt: '2026-11-01T00:01:00.000Z',
    });
    expect(lines[2]).toEqual({ index: { _index: 'clean-logs-2026.11', _id: 'b'.repeat(64) } });
    expect(indexOf(second)).toBe('clean-logs-2026.11');
  });

  it('throws when the bulk answer reports an error, naming the record', async () => {
    mock.add({ method: 'POST', path: '/_bulk' }, () => ({
      took: 1,
      errors: true,
      items: [
        {
          index: {
            _id: 'a'.repeat(64),
            status: 400,
            error: { type: 'mapper_parsing_exception', reason: 'bad field' },
          },
        },
      ],
    }));
    await expect(index.write([record()])).rejects.toThrow(`clean record ${'a'.repeat(64)}: bad field`);
  });

  it('searches newest first with search_after, and reads hits back as records', async () => {
    let sent: MockParams | undefined;
    mock.add({ method: ['GET', 'POST'], path: '/clean-logs/_search' }, (params) => {
      sent = params;
      const { toDomain: _toDomain, ...doc } = {
        ...record(),
        toDomain: 'example.net',
        firstSeenAt: '2026-10-31T23:59:00.000Z',
        lastEventAt: '2026-11-01T00:01:00.000Z',
      };
      return {
        hits: {
          total: { value: 42, relation: 'eq' },
          hits: [{ _id: doc.id, _source: doc, sort: [1, doc.id] }],
        },
      };
    });
    const after = { at: new Date('2026-11-02T00:00:00Z'), id: 'f'.repeat(64) };
    const page = await index.search({ ...window, companyId: 7, status: 'sent' }, 50, after);
    expect(sent?.body).toMatchObject({
      size: 50,
      sort: [{ lastEventAt: 'desc' }, { id: 'desc' }],
      search_after: [after.at.getTime(), after.id],
      track_total_hits: true,
    });
    expect(page.total).toBe(42);
    expect(page.items).toEqual([record()]);
  });

  it('turns the date histogram and its status terms into counts per day', async () => {
    let sent: MockParams | undefined;
    mock.add({ method: ['GET', 'POST'], path: '/clean-logs/_search' }, (params) => {
      sent = params;
      return {
        hits: { total: { value: 5, relation: 'eq' }, hits: [] },
        aggregations: {
          days: {
            buckets: [
              {
                key: 1761955200000,
                key_as_string: '2026-11-01',
                doc_count: 5,
                statuses: {
                  buckets: [
                    { key: 'sent', doc_count: 3 },
                    { key: 'bounced', doc_count: 2 },
                  ],
                },
                opened: { doc_count: 1 },
                clicked: { doc_count: 0 },
              },
            ],
          },
        },
      };
    });
    const days = await index.countsByDay({ ...window, companyId: 7 });
    expect((sent?.body as { aggs: { days: { date_histogram: unknown } } }).aggs.days.date_histogram).toEqual({
      field: 'lastEventAt',
      calendar_interval: 'day',
      format: 'yyyy-MM-dd',
      time_zone: 'UTC',
      min_doc_count: 1,
    });
    expect(days).toEqual([
      {
        day: '2026-11-01',
        counts: expect.objectContaining({
          processed: 5,
          sent: 3,
          bounced: 2,
          delivered: 0,
          opened: 1,
          clicked: 0,
        }),
      },
    ]);
  });

  it('streams the export with a point in time and search_after, and closes it', async () => {
    const searches: MockParams[] = [];
    let closed: unknown;
    mock.add({ method: 'POST', path: '/clean-logs/_pit' }, () => ({ id: 'pit-1' }));
    mock.add({ method: 'DELETE', path: '/_pit' }, (params) => {
      closed = params.body;
      return { succeeded: true, num_freed: 1 };
    });
    mock.add({ method: ['GET', 'POST'], path: '/_search' }, (params) => {
      searches.push(params);
      const doc = {
        ...record(),
        firstSeenAt: '2026-10-31T23:59:00.000Z',
        lastEventAt: '2026-11-01T00:01:00.000Z',
      };
      return searches.length === 1
        ? { pit_id: 'pit-2', hits: { hits: [{ _id: doc.id, _source: doc, sort: [1, doc.id] }] } }
        : { pit_id: 'pit-2', hits: { hits: [] } };
    });
    const batches: CleanRecord[][] = [];
    for await (const batch of index.stream({ ...window, companyId: 7 }, 10)) batches.push(batch);
    expect(batches).toHaveLength(1);
    expect(searches[0].body).toMatchObject({ pit: { id: 'pit-1', keep_alive: '1m' }, size: 10 });
    expect(searches[1].body).toMatchObject({ pit: { id: 'pit-2' }, search_after: [1, 'a'.repeat(64)] });
    expect(closed).toEqual({ id: 'pit-2' });
  });

  it('isUp is false when Elasticsearch does not answer, true when it does', async () => {
    mock.add(
      { method: 'HEAD', path: '/' },
      () => new errors.ResponseError({ body: {}, statusCode: 503, warnings: null, meta: {} as never }),
    );
    await expect(index.isUp()).resolves.toBe(false);
    mock.clearAll();
    mock.add({ method: 'HEAD', path: '/' }, () => '');
    await expect(index.isUp()).resolves.toBe(true);
  });

  it('builds the filter: a range on lastEventAt, terms, and case-insensitive wildcards for search', () => {
    expect(queryOf({ ...window, companyId: 7, recipient: 'Jo@Example.NET', search: 'a*b' })).toEqual({
      bool: {
        filter: [
          { range: { lastEventAt: { gte: '2026-11-01T00:00:00.000Z', lt: '2026-11-03T00:00:00.000Z' } } },
          { term: { companyId: 7 } },
          { term: { to: 'jo@example.net' } },
          {
            bool: {
              should: ['to', 'from', 'messageId', 'queueId'].map((field) => ({
                wildcard: { [field]: { value: '*a\\*b*', case_insensitive: true } },
              })),
              minimum_should_match: 1,
            },
          },
        ],
      },
    });
  });

  it('filters every company only when told so: no company term for companyId all', () => {
    expect(queryOf({ ...window, companyId: 'all' })).toEqual({
      bool: {
        filter: [
          { range: { lastEventAt: { gte: '2026-11-01T00:00:00.000Z', lt: '2026-11-03T00:00:00.000Z' } } },
        ],
      },
    });
  });
});
