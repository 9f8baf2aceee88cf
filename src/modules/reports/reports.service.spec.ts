import type { CleanRecord } from '../log-index/clean-record';
import { csvChunks } from './reports.service';

/** V8's largest ordinary heap object: a string above it goes to the large-object space. */
const LARGEST_ORDINARY_OBJECT = 128 * 1024;

function record(n: number): CleanRecord {
  return {
    id: n.toString(16).padStart(64, '0'),
    companyId: 7,
    companyUuid: '5f0c6f1e-8d3a-4a57-9a43-1b2c3d4e5f60',
    host: 'relay1',
    queueId: 'AA10A2839B',
    messageId: `${n}@example.com`,
    from: 'news@acme.example',
    senderDomain: 'acme.example',
    to: `r${n}@example.net`,
    origTo: null,
    status: 'bounced',
    dsn: '5.1.1',
    // A long remote answer, as real bounces have: a page of 500 rows is then well over 128 KB.
    response: `550 5.1.1 <r${n}@example.net>: Recipient address rejected: ${'x'.repeat(300)}`,
    relay: 'mx.example.net[10.0.0.1]:25',
    delay: 1.5,
    size: 920,
    clientIp: '1.2.3.4',
    saslUsername: 'r-7f3k2q9d',
    remoteQueueId: null,
    attempts: 1,
    opened: false,
    clicked: false,
    firstSeenAt: new Date('2026-11-01T00:00:00Z'),
    lastEventAt: new Date('2026-11-01T00:01:00Z'),
    events: [],
    emailId: null,
    provider: 'other',
    bounceType: 'hard',
    bounceCategory: 'unknown-recipient',
    bounceRule: 'rfc3463-5.1.1',
  };
}

/** Pages as LogIndex.stream gives them: one a turn. */
async function* pagesOf(...pages: CleanRecord[][]): AsyncGenerator<CleanRecord[]> {
  for (const page of pages) yield await Promise.resolve(page);
}

describe('csvChunks (the export CSV)', () => {
  it('writes the header, then every row in order, at most 100 rows and under 128 KB a chunk', async () => {
    const first = Array.from({ length: 500 }, (_, i) => record(i));
    const second = Array.from({ length: 37 }, (_, i) => record(500 + i));

    const chunks: string[] = [];
    for await (const chunk of csvChunks(pagesOf(first, second))) chunks.push(chunk);

    // The header, five chunks of the first page, one of the second.
    expect(chunks).toHaveLength(1 + 5 + 1);
    expect(chunks[0]).toMatch(/^id,last_event_at,first_seen_at,status,from,to,/);
    const rows = chunks.slice(1).join('').split('\n').filter(Boolean);
    expect(rows.map((row) => row.slice(0, 64))).toEqual([...first, ...second].map((r) => r.id));
    // The first page as one string would have been a large object.
    expect(Buffer.byteLength(chunks.slice(1, 6).join(''))).toBeGreaterThan(LARGEST_ORDINARY_OBJECT);
    for (const chunk of chunks.slice(1)) {
      expect(chunk.split('\n').filter(Boolean).length).toBeLessThanOrEqual(100);
      expect(Buffer.byteLength(chunk)).toBeLessThan(LARGEST_ORDINARY_OBJECT);
    }
  });

  it('writes only the header for no records', async () => {
    const chunks: string[] = [];
    for await (const chunk of csvChunks(pagesOf())) chunks.push(chunk);
    expect(chunks).toHaveLength(1);
    expect(chunks[0].endsWith('\n')).toBe(true);
  });
});
