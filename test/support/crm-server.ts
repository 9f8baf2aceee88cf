import { randomBytes } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

export interface RecordedCrmRequest {
  path: string;
  authorization: string | undefined;
  /** JSON body (upserts) or form fields (token endpoint). */
  body: Record<string, unknown>;
  status: number;
}

export interface CrmRecord {
  id: string;
  fields: Record<string, unknown>;
  /** How many upserts wrote it (1 = created once, never touched again). */
  writes: number;
}

export type CrmMode = { kind: 'ok' } | { kind: 'fail'; status: number } | { kind: 'stall' };

/**
 * A Zoho-style CRM on loopback: the OAuth token endpoint (`/oauth/v2/token`, authorisation code
 * and refresh token grants) and `/crm/v8/{Accounts|Contacts}/upsert` with
 * `Authorization: Zoho-oauthtoken`. Accounts are keyed by `duplicate_check_fields`, so a retried
 * upsert updates instead of duplicating. It records every request, refuses records whose
 * Account_Name is "Refuse me", and can be told to fail, to stall, to expire its tokens, or to answer token grants out of shape.
 */
export class CrmServer {
  readonly requests: RecordedCrmRequest[] = [];
  readonly accounts = new Map<string, CrmRecord>();
  readonly contacts = new Map<string, CrmRecord>();
  mode: CrmMode = { kind: 'ok' };
  /** Fields laid over every granted token answer (e.g. `{ expires_in: 1e20 }`) until set back to null. */
  tokenAnswerOverride: Record<string, unknown> | null = null;
  private readonly codes = new Set<string>();
  private readonly accessTokens = new Set<string>();
  private readonly refreshTokens = new Set<string>();
  private readonly stalled = new Set<ServerResponse>();
  private server?: Server;
  private nextId = 5_000_000_000_000;

  constructor(
    readonly clientId: string,
    readonly clientSecret: string,
  ) {}

  get url(): string {
    const address = this.server?.address() as AddressInfo | null;
    if (!address) throw new Error('CRM server is not started');
    return `http://127.0.0.1:${address.port}`;
  }

  /** A code the token endpoint will exchange once, as if an admin had granted access. */
  issueCode(): string {
    const code = `1000.${randomBytes(16).toString('hex')}`;
    this.codes.add(code);
    return code;
  }

  /** Every access token stops working (the service must refresh). */
  expireAccessTokens(): void {
    this.accessTokens.clear();
  }

  upsertsOf(module: 'Accounts' | 'Contacts'): RecordedCrmRequest[] {
    return this.requests.filter((r) => r.path === `/crm/v8/${module}/upsert` && r.status === 200);
  }

  tokenGrants(grant: string): RecordedCrmRequest[] {
    return this.requests.filter((r) => r.path === '/oauth/v2/token' && r.body.grant_type === grant);
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    for (const res of this.stalled) res.destroy();
    this.stalled.clear();
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const path = (req.url ?? '').split('?')[0];
    const body: Record<string, unknown> = (req.headers['content-type'] ?? '').includes('json')
      ? (JSON.parse(text || '{}') as Record<string, unknown>)
      : Object.fromEntries(new URLSearchParams(text));
    const recorded: RecordedCrmRequest = { path, authorization: req.headers.authorization, body, status: 0 };
    this.requests.push(recorded);
    const answer = (status: number, payload: unknown) => {
      recorded.status = status;
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    };

    if (this.mode.kind === 'stall') {
      this.stalled.add(res);
      return;
    }
    if (this.mode.kind === 'fail')
      return answer(this.mode.status, { code: 'INTERNAL_ERROR', message: 'down' });

    if (req.method === 'POST' && path === '/oauth/v2/token') {
      const token = this.token(body);
      return answer(200, 'error' in token ? token : { ...token, ...this.tokenAnswerOverride });
    }
    const upsert = /^\/crm\/v8\/(Accounts|Contacts)\/upsert$/.exec(path);
    if (req.method === 'POST' && upsert) {
      const token = /^Zoho-oauthtoken (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (!token || !this.accessTokens.has(token)) {
        return answer(401, { code: 'INVALID_TOKEN', message: 'invalid oauth token', status: 'error' });
      }
      const store = upsert[1] === 'Accounts' ? this.accounts : this.contacts;
      const keyFields = body.duplicate_check_fields as string[];
      const data = (body.data as Array<Record<string, unknown>>).map((fields) => {
        if (fields.Account_Name === 'Refuse me') {
          return { code: 'INVALID_DATA', status: 'error', message: 'invalid data', details: {} };
        }
        const key = keyFields.map((f) => String(fields[f])).join('|');
        const existing = store.get(key);
        if (existing) {
          existing.fields = fields;
          existing.writes++;
        } else {
          store.set(key, { id: String(this.nextId++), fields, writes: 1 });
        }
        return {
          code: 'SUCCESS',
          status: 'success',
          action: existing ? 'update' : 'insert',
          duplicate_field: existing ? keyFields[0] : null,
          message: `record ${existing ? 'updated' : 'added'}`,
          details: { id: store.get(key)!.id },
        };
      });
      return answer(200, { data });
    }
    answer(404, { code: 'NOT_FOUND' });
  }

  private token(form: Record<string, unknown>): Record<string, unknown> {
    if (form.client_id !== this.clientId || form.client_secret !== this.clientSecret)
      return { error: 'invalid_client' };
    if (form.grant_type === 'authorization_code') {
      if (!this.codes.delete(String(form.code))) return { error: 'invalid_code' };
      const refresh = `1000.refresh.${randomBytes(12).toString('hex')}`;
      this.refreshTokens.add(refresh);
      return { ...this.newAccessToken(), refresh_token: refresh };
    }
    if (form.grant_type === 'refresh_token') {
      if (!this.refreshTokens.has(String(form.refresh_token))) return { error: 'invalid_code' };
      return this.newAccessToken();
    }
    return { error: 'unsupported_grant_type' };
  }

  private newAccessToken(): Record<string, unknown> {
    const access = `1000.access.${randomBytes(12).toString('hex')}`;
    this.accessTokens.add(access);
    return { access_token: access, api_domain: this.url, token_type: 'Bearer', expires_in: 3600 };
  }
}
