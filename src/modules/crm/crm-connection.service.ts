import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { LessThan, Repository } from 'typeorm';
import { EncryptionService } from '../../common/crypto/encryption.service';
import { BadRequestError, ServiceNotConfiguredError } from '../../common/errors/domain-error';
import { AppConfig } from '../../config/app-config';
import { CrmClient, CrmTokens, CrmUnavailableError } from './crm.client';
import { CrmConnection } from './entities/crm-connection.entity';
import { CrmOAuthState } from './entities/crm-oauth-state.entity';

const STATE_TTL_MS = 10 * 60_000;
/** An access token this close to its expiry is refreshed before use (integrations.md). */
const REFRESH_MARGIN_MS = 60_000;
const CONNECTION_ID = 1;
const PROVIDER = 'zoho';

/** A usable access token and where the CRM's API is. */
export interface CrmSession {
  accessToken: string;
  apiDomain: string;
}

/**
 * Connecting the CRM (OAuth 2.0 authorisation code) and keeping its access token fresh. The
 * `state` of `/auth-crm` names the admin, lasts 10 minutes, is signed with a key derived from
 * ENCRYPTION_KEY and works once (its nonce row is deleted when used). Tokens are stored
 * encrypted; a refresh happens when the token is within 60 s of expiry, once per process at a time.
 */
@Injectable()
export class CrmConnectionService {
  private readonly stateKey: Buffer;
  private refreshing?: Promise<CrmSession>;

  constructor(
    @InjectRepository(CrmConnection) private readonly connections: Repository<CrmConnection>,
    @InjectRepository(CrmOAuthState) private readonly states: Repository<CrmOAuthState>,
    private readonly client: CrmClient,
    private readonly encryption: EncryptionService,
    config: AppConfig,
  ) {
    this.stateKey = createHmac('sha256', config.encryptionKey).update('crm-oauth-state').digest();
  }

  /** The URL an admin opens to grant the service access; 503 when the CRM is not configured. */
  async authorizationUrl(adminUuid: string): Promise<{ authorizationUrl: string }> {
    if (!this.client.isConfigured) throw new ServiceNotConfiguredError('CRM');
    const nonce = randomBytes(24).toString('base64url');
    const expiresAt = new Date(Date.now() + STATE_TTL_MS);
    await this.states.delete({ expiresAt: LessThan(new Date()) });
    await this.states.insert({ nonce, adminUuid, expiresAt });
    const body = Buffer.from(JSON.stringify({ n: nonce, a: adminUuid, e: expiresAt.getTime() })).toString(
      'base64url',
    );
    return { authorizationUrl: this.client.authorizationUrl(`${body}.${this.sign(body)}`) };
  }

  /**
   * The OAuth redirect: checks and uses up `state`, then exchanges `code` and stores the tokens.
   * 400 for a state that is forged, expired or used, for `?error`, and for a refused code.
   */
  async connect(query: {
    state: string;
    code?: string;
    error?: string;
  }): Promise<{ connected: true; provider: string; expiresAt: string }> {
    if (!this.client.isConfigured) throw new ServiceNotConfiguredError('CRM');
    const adminUuid = await this.useState(query.state);
    if (query.error) throw new BadRequestError(`The CRM authorisation was refused: ${query.error}`);
    if (!query.code) throw new BadRequestError('code is required');
    const tokens = await this.client.exchangeCode(query.code);
    const existing = await this.connections.findOneBy({ id: CONNECTION_ID });
    const now = new Date();
    const saved = await this.connections.save(
      this.connections.create({
        id: CONNECTION_ID,
        provider: PROVIDER,
        ...this.sealed(tokens, existing),
        connectedByAdminUuid: adminUuid,
        connectedAt: now,
      }),
    );
    return { connected: true, provider: saved.provider, expiresAt: saved.expiresAt.toISOString() };
  }

  async isConnected(): Promise<boolean> {
    return this.client.isConfigured && (await this.connections.existsBy({ id: CONNECTION_ID }));
  }

  /** A token valid for at least a minute: 503 when the CRM is not configured or not connected. */
  async session(): Promise<CrmSession> {
    if (!this.client.isConfigured) throw new ServiceNotConfiguredError('CRM');
    const connection = await this.connections.findOneBy({ id: CONNECTION_ID });
    if (!connection)
      throw new CrmUnavailableError('CRM is not connected: an admin connects it with /api/v1/auth-crm');
    if (connection.expiresAt.getTime() - Date.now() > REFRESH_MARGIN_MS) {
      return {
        accessToken: this.encryption.decrypt(connection.accessTokenCipher),
        apiDomain: connection.apiDomain,
      };
    }
    return this.refreshed(connection);
  }

  /** After the CRM refused the token: refresh it now, whatever its expiry says. */
  async sessionAfterRefusal(): Promise<CrmSession> {
    const connection = await this.connections.findOneBy({ id: CONNECTION_ID });
    if (!connection)
      throw new CrmUnavailableError('CRM is not connected: an admin connects it with /api/v1/auth-crm');
    return this.refreshed(connection);
  }

  /** Deletes states older than their 10 minutes; how many went. */
  async purgeExpiredStates(): Promise<number> {
    return (await this.states.delete({ expiresAt: LessThan(new Date()) })).affected ?? 0;
  }

  private refreshed(connection: CrmConnection): Promise<CrmSession> {
    this.refreshing ??= this.refresh(connection).finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async refresh(connection: CrmConnection): Promise<CrmSession> {
    if (!connection.refreshTokenCipher) {
      throw new CrmUnavailableError(
        'The CRM access token expired and there is no refresh token: connect the CRM again',
      );
    }
    const tokens = await this.client.refresh(this.decrypt(connection.refreshTokenCipher));
    await this.connections.update({ id: CONNECTION_ID }, this.sealed(tokens, connection));
    return { accessToken: tokens.accessToken, apiDomain: tokens.apiDomain };
  }

  /** The stored form of new tokens; a refresh answer has no refresh token, so the old one stays. */
  private sealed(tokens: CrmTokens, previous: CrmConnection | null): Partial<CrmConnection> {
    return {
      accessTokenCipher: this.encryption.encrypt(tokens.accessToken),
      refreshTokenCipher: tokens.refreshToken
        ? this.encryption.encrypt(tokens.refreshToken)
        : (previous?.refreshTokenCipher ?? null),
      expiresAt: new Date(Date.now() + tokens.expiresInSeconds * 1000),
      apiDomain: tokens.apiDomain,
    };
  }

  /** The admin a genuine, unexpired, unused state names; the state cannot be used again. */
  private async useState(state: string): Promise<string> {
    const invalid = () => new BadRequestError('Invalid or expired state');
    const [body, signature, ...rest] = state.split('.');
    if (!body || !signature || rest.length) throw invalid();
    const expected = Buffer.from(this.sign(body));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalid();
    let payload: { n?: unknown; a?: unknown; e?: unknown };
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as typeof payload;
    } catch {
      throw invalid();
    }
    if (typeof payload.n !== 'string' || typeof payload.a !== 'string' || typeof payload.e !== 'number')
      throw invalid();
    if (payload.e <= Date.now()) throw invalid();
    // Deleting the nonce is what makes the state single-use, also between two replicas.
    const used = await this.states.delete({ nonce: payload.n });
    if (!used.affected) throw invalid();
    return payload.a;
  }

  private decrypt(sealed: string): string {
    try {
      return this.encryption.decrypt(sealed);
    } catch {
      throw new CrmUnavailableError(
        'The stored CRM tokens cannot be decrypted with ENCRYPTION_KEY: connect the CRM again',
      );
    }
  }

  private sign(body: string): string {
    return createHmac('sha256', this.stateKey).update(body).digest('base64url');
  }
}
