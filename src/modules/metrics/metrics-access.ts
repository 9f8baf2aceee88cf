import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { ExpectedSecret } from '../../common/secrets';

/** Who may read `/metrics`: `allowed`, or why not (401 without the token, 403 off loopback). */
export type MetricsAccess = 'allowed' | 'unauthorized' | 'forbidden';

/** What the rule reads of a request: its headers and the address of the TCP peer. */
export interface MetricsRequest {
  headers: IncomingHttpHeaders;
  socket: { remoteAddress?: string };
}

/**
 * The rule of `/metrics` (API and relay agent): with METRICS_TOKEN set, `Authorization: Bearer
 * <METRICS_TOKEN>` (compared in constant time) from anywhere; unset, only a peer on loopback
 * that no proxy forwarded. The peer is the TCP socket's address, never X-Forwarded-For (which a
 * client writes): and a request that carries forwarding headers came through a proxy, so a
 * reverse proxy on the same host does not open the metrics to everyone it serves.
 */
export class MetricsAccessRule {
  private readonly token: ExpectedSecret | undefined;

  constructor(token: string | undefined) {
    this.token = token ? new ExpectedSecret(token) : undefined;
  }

  check(request: MetricsRequest): MetricsAccess {
    if (this.token) {
      const auth = request.headers.authorization;
      const given = auth && /^Bearer /i.test(auth) ? auth.slice(7).trim() : '';
      return given && this.token.matches(given) ? 'allowed' : 'unauthorized';
    }
    const forwarded =
      request.headers['x-forwarded-for'] !== undefined || request.headers.forwarded !== undefined;
    return !forwarded && isLoopback(request.socket.remoteAddress) ? 'allowed' : 'forbidden';
  }
}

/** 127.0.0.0/8, ::1, and IPv4 loopback mapped into IPv6 (`::ffff:127.0.0.1`). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const ip = address.toLowerCase().replace(/^::ffff:/, '');
  if (isIP(ip) === 4) return ip.startsWith('127.');
  return ip === '::1';
}

export const METRICS_UNAUTHORIZED = 'Missing or invalid metrics token';
export const METRICS_FORBIDDEN = 'Metrics are served to loopback only while METRICS_TOKEN is unset';
