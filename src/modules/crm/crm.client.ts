import { HttpStatus, Injectable, Logger } from '@nestjs/common';
import { BadRequestError, DomainError, ServiceNotConfiguredError } from '../../common/errors/domain-error';
import { isTimeout, parseJsonObject } from '../../common/http/outbound';
import { AppConfig } from '../../config/app-config';

/** The CRM is down, refused the call, or answered something unreadable: 503. */
export class CrmUnavailableError extends DomainError {
  constructor(message = 'CRM is unavailable') {
    super(HttpStatus.SERVICE_UNAVAILABLE, message);
  }
}

/** The access token was refused (expired or revoked): refresh and try once more. */
export class CrmTokenRefusedError extends CrmUnavailableError {
  constructor() {
    super('CRM refused the access token');
  }
}

/** The CRM answered, but with something the service cannot use (a token answer out of shape): 502. */
export class CrmBadAnswerError extends DomainError {
  constructor(message: string) {
    super(HttpStatus.BAD_GATEWAY, message);
  }
}

/** What the OAuth server hands back for a code or a refresh token. */
export interface CrmTokens {
  accessToken: string;
  /** Only with a code exchange (and only on the first consent). */
  refreshToken: string | null;
  expiresInSeconds: number;
  apiDomain: string;
}

/** One record's outcome in an upsert, in the order the records were sent. */
export type CrmUpsertOutcome = { ok: true; id: string } | { ok: false; error: string };

export type CrmModule = 'Accounts' | 'Contacts';

const MAX_ERROR = 300;
/** The longest `expires_in` taken from the OAuth server (Zoho's is 3600): a year, in seconds. */
export const MAX_EXPIRES_IN_SECONDS = 365 * 86_400;
/** What a token answer without `expires_in` is taken to mean (RFC 6749 makes it optional). */
const DEFAULT_EXPIRES_IN_SECONDS = 3600;
const MAX_TOKEN_LENGTH = 4096;
/** The column that keeps it holds 255 characters. */
const MAX_API_DOMAIN_LENGTH = 255;

/**
 * The Zoho-style CRM of integrations.md: the OAuth token endpoint at `{CRM_ACCOUNTS_URL}` and
 * the upsert API at the connection's `api_domain`. Each call is bounded by CRM_TIMEOUT_MS.
 */
@Injectable()
export class CrmClient {
  private readonly logger = new Logger(CrmClient.name);

  constructor(private readonly config: AppConfig) {}

  get isConfigured(): boolean {
    return Boolean(this.config.env.CRM_CLIENT_ID && this.config.env.CRM_CLIENT_SECRET);
  }

  get redirectUri(): string {
    return this.config.env.CRM_REDIRECT_URI ?? `${this.config.publicUrl}/api/v1/get-token`;
  }

  authorizationUrl(state: string): string {
    const env = this.config.env;
    const url = new URL('/oauth/v2/auth', env.CRM_ACCOUNTS_URL);
    url.search = new URLSearchParams({
      client_id: this.credentials().clientId,
      response_type: 'code',
      redirect_uri: this.redirectUri,
      scope: env.CRM_SCOPES,
      access_type: 'offline',
      prompt: 'consent',
      state,
    }).toString();
    return url.toString();
  }

  /** `grant_type=authorization_code`. A code the server refuses is a 400 naming its error. */
  exchangeCode(code: string): Promise<CrmTokens> {
    return this.token({ grant_type: 'authorization_code', code, redirect_uri: this.redirectUri }, (error) => {
      throw new BadRequestError(`The CRM refused the authorisation code: ${error}`);
    });
  }

  /** `grant_type=refresh_token`. A refused refresh token means an admin must connect again. */
  refresh(refreshToken: string): Promise<CrmTokens> {
    return this.token({ grant_type: 'refresh_token', refresh_token: refreshToken }, (error) => {
      throw new CrmUnavailableError(`The CRM refused the refresh token (${error}): connect the CRM again`);
    });
  }

  /**
   * `POST {apiDomain}/crm/v8/{module}/upsert` with at most 100 records; one outcome per record.
   * Throws CrmTokenRefusedError on 401, CrmUnavailableError when the call as a whole failed.
   */
  async upsert(
    apiDomain: string,
    accessToken: string,
    module: CrmModule,
    records: Array<Record<string, unknown>>,
    duplicateCheckFields: string[],
  ): Promise<CrmUpsertOutcome[]> {
    if (records.length > 100) throw new Error('A CRM upsert carries at most 100 records');
    const { status, answer } = await this.call(`${apiDomain.replace(/\/+$/, '')}/crm/v8/${module}/upsert`, {
      method: 'POST',
      headers: { authorization: `Zoho-oauthtoken ${accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ data: records, duplicate_check_fields: duplicateCheckFields }),
    });
    if (status === 401) throw new CrmTokenRefusedError();
    const data = answer?.data;
    if (status < 200 || status >= 300 || !Array.isArray(data) || data.length !== records.length) {
      this.logger.warn({ status, code: answer?.code, module }, 'CRM upsert failed');
      throw new CrmUnavailableError(`CRM upsert failed: ${describe(status, answer)}`);
    }
    return data.map((item: unknown): CrmUpsertOutcome => {
      const entry = (item ?? {}) as {
        status?: unknown;
        code?: unknown;
        message?: unknown;
        details?: { id?: unknown };
      };
      const id = entry.details?.id;
      if (entry.status === 'success' && (typeof id === 'string' || typeof id === 'number')) {
        return { ok: true, id: String(id) };
      }
      const reason = [entry.code, entry.message].filter((p) => typeof p === 'string' && p).join(': ');
      return { ok: false, error: (reason || 'record refused').slice(0, MAX_ERROR) };
    });
  }

  private credentials(): { clientId: string; clientSecret: string } {
    const { CRM_CLIENT_ID: clientId, CRM_CLIENT_SECRET: clientSecret } = this.config.env;
    if (!clientId || !clientSecret) throw new ServiceNotConfiguredError('CRM');
    return { clientId, clientSecret };
  }

  private async token(params: Record<string, string>, refused: (error: string) => never): Promise<CrmTokens> {
    const { clientId, clientSecret } = this.credentials();
    const { status, answer } = await this.call(
      new URL('/oauth/v2/token', this.config.env.CRM_ACCOUNTS_URL).toString(),
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...params, client_id: clientId, client_secret: clientSecret }).toString(),
      },
    );
    // Zoho answers a refused code or refresh token with `{ error }`, often with HTTP 200.
    if (typeof answer?.error === 'string' && answer.error && status < 500) {
      refused(answer.error.slice(0, 100));
    }
    if (status !== 200 || !answer) {
      this.logger.warn({ status }, 'CRM token endpoint answered without a token');
      throw new CrmUnavailableError(`CRM token endpoint failed: ${describe(status, answer)}`);
    }
    return readTokens(answer, (problem) => {
      // The answer holds tokens: only what is wrong with it is logged.
      this.logger.warn({ problem }, 'CRM token endpoint answered an unusable token');
      return new CrmBadAnswerError(`The CRM answered an unusable token: ${problem}`);
    });
  }

  private async call(
    url: string,
    init: RequestInit,
  ): Promise<{ status: number; answer: Record<string, unknown> | null }> {
    try {
      const response = await fetch(url, {
        ...init,
        headers: { accept: 'application/json', ...(init.headers as Record<string, string>) },
        signal: AbortSignal.timeout(this.config.env.CRM_TIMEOUT_MS),
      });
      return { status: response.status, answer: parseJsonObject(await response.text()) };
    } catch (err: unknown) {
      if (isTimeout(err)) throw new CrmUnavailableError('CRM did not answer in time');
      this.logger.warn({ err }, 'CRM unreachable');
      throw new CrmUnavailableError('CRM is unreachable');
    }
  }
}

/**
 * The tokens of a 200 answer of the token endpoint, every field checked before anything is
 * stored: `access_token` a string, `api_domain` an http(s) URL, `refresh_token` a string when
 * given (a refresh answer has none), `expires_in` a whole number of seconds from 1 to a year when given (3600 when not).
 */
function readTokens(answer: Record<string, unknown>, unusable: (problem: string) => Error): CrmTokens {
  const { access_token: accessToken, refresh_token: refreshToken, api_domain: apiDomain } = answer;
  if (!isToken(accessToken))
    throw unusable(`access_token must be a string of 1 to ${MAX_TOKEN_LENGTH} characters`);
  const noRefreshToken = refreshToken === undefined || refreshToken === null || refreshToken === '';
  if (!noRefreshToken && !isToken(refreshToken)) {
    throw unusable(`refresh_token must be a string of 1 to ${MAX_TOKEN_LENGTH} characters`);
  }
  if (typeof apiDomain !== 'string' || apiDomain.length > MAX_API_DOMAIN_LENGTH || !isHttpUrl(apiDomain)) {
    throw unusable(`api_domain must be an http(s) URL of at most ${MAX_API_DOMAIN_LENGTH} characters`);
  }
  const expiresIn = expiresInSeconds(answer.expires_in);
  if (expiresIn === undefined) {
    throw unusable(`expires_in must be a whole number of seconds from 1 to ${MAX_EXPIRES_IN_SECONDS}`);
  }
  return {
    accessToken,
    refreshToken: noRefreshToken ? null : refreshToken,
    expiresInSeconds: expiresIn,
    apiDomain,
  };
}

function isToken(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_TOKEN_LENGTH;
}

/** `expires_in` as a number (or a string of digits) of seconds within range; undefined when unusable. */
function expiresInSeconds(value: unknown): number | undefined {
  if (value === undefined || value === null) return DEFAULT_EXPIRES_IN_SECONDS;
  const seconds = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value;
  if (typeof seconds !== 'number' || !Number.isInteger(seconds)) return undefined;
  return seconds >= 1 && seconds <= MAX_EXPIRES_IN_SECONDS ? seconds : undefined;
}

function describe(status: number, answer: Record<string, unknown> | null): string {
  const detail = [answer?.code, answer?.message].filter((p) => typeof p === 'string' && p).join(': ');
  return (detail ? `HTTP ${status}, ${detail}` : `HTTP ${status}`).slice(0, MAX_ERROR);
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}
