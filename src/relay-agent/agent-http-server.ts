import { Logger } from '@nestjs/common';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DataSource } from 'typeorm';
import {
  METRICS_FORBIDDEN,
  METRICS_UNAUTHORIZED,
  MetricsAccessRule,
} from '../modules/metrics/metrics-access';
import type { MetricsService } from '../modules/metrics/metrics.service';
import { databaseUp } from '../modules/health/health-checks';

/**
 * The relay agent's small HTTP listener (AGENT_HTTP_PORT): `GET /health` (200 while the database
 * answers within 2 s, else 503) and `GET /metrics` (the API's rule: METRICS_TOKEN, or loopback
 * while it is unset). Anything else is a 404. Answers are the API's envelope, except the
 * metrics, which are the Prometheus text format.
 */
export class AgentHttpServer {
  private readonly logger = new Logger('RelayAgentHttp');
  private readonly server: Server;
  private readonly access: MetricsAccessRule;

  constructor(
    private readonly metrics: MetricsService,
    private readonly dataSource: DataSource,
    metricsToken: string | undefined,
  ) {
    this.access = new MetricsAccessRule(metricsToken);
    this.server = createServer((request, response) => {
      this.answer(request, response).catch((e: unknown) => {
        this.logger.error({ err: e }, 'Relay agent HTTP request failed');
        if (!response.headersSent) json(response, 500, 'Internal server error');
        else response.destroy();
      });
    });
    this.server.keepAliveTimeout = 5000;
  }

  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
    });
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') return json(response, 404, 'Not found');
    if (path === '/health') {
      return (await databaseUp(this.dataSource))
        ? json(response, 200, 'Relay agent is healthy', { status: 'ok', checks: { database: 'up' } })
        : json(response, 503, 'Database is down');
    }
    if (path !== '/metrics') return json(response, 404, 'Not found');
    switch (this.access.check(request)) {
      case 'unauthorized':
        return json(response, 401, METRICS_UNAUTHORIZED);
      case 'forbidden':
        return json(response, 403, METRICS_FORBIDDEN);
      case 'allowed': {
        const text = await this.metrics.exposition();
        response.writeHead(200, { 'content-type': this.metrics.contentType, 'cache-control': 'no-store' });
        response.end(text);
      }
    }
  }
}

/** The API's envelope: success with data, or failure with `error.msg`. */
function json(response: ServerResponse, status: number, msg: string, data?: object): void {
  const body =
    status < 400
      ? { status: 'success', code: status, msg, data: data ?? {} }
      : { status: 'failed', code: status, msg, data: null, error: { msg } };
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  response.end(JSON.stringify(body));
}
