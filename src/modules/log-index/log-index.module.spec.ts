import { createServer, IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chooseLogIndex } from './log-index.module';
import type { SqlLogIndex } from './sql-log-index';

interface Received {
  method: string;
  url: string;
  body: unknown;
}

/** An HTTP server answering every request as Elasticsearch acknowledges a write, keeping what it got. */
async function acknowledgingNode(): Promise<{ server: Server; url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      received.push({ method: req.method!, url: req.url!, body: text ? JSON.parse(text) : null });
      res.writeHead(200, { 'content-type': 'application/json', 'x-elastic-product': 'Elasticsearch' });
      res.end(JSON.stringify({ acknowledged: true }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, received };
}

describe('chooseLogIndex', () => {
  const sql = { kind: 'sql' } as unknown as SqlLogIndex;

  it('is the SQL index when ELASTICSEARCH_NODE is not set, and loads no Elasticsearch client', async () => {
    // The first test of the file: nothing has asked for the client yet.
    const loaded = () => Object.keys(require.cache).filter((path) => path.includes('@elastic/elasticsearch'));

    await expect(chooseLogIndex(undefined, sql)).resolves.toBe(sql);
    await expect(chooseLogIndex('', sql)).resolves.toBe(sql);
    expect(loaded()).toEqual([]);
  });

  it('is Elasticsearch when ELASTICSEARCH_NODE is set, with the clean-log template installed there', async () => {
    const node = await acknowledgingNode();
    try {
      const index = await chooseLogIndex(node.url, sql);

      expect(index.kind).toBe('elasticsearch');
      expect(node.received).toHaveLength(1);
      expect(node.received[0]).toMatchObject({
        method: 'PUT',
        url: '/_index_template/clean-logs',
        body: { index_patterns: ['clean-logs-*'], template: { aliases: { 'clean-logs': {} } } },
      });
    } finally {
      node.server.closeAllConnections();
      await new Promise((resolve) => node.server.close(resolve));
    }
  });
});
