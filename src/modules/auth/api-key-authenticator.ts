import { ForbiddenException, Injectable, Logger, UnauthorizedException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { LRUCache } from 'lru-cache';
import { DataSource } from 'typeorm';
import { ChangeNotices } from '../../database/change-notices';
import { EntityRowReader } from '../../database/entity-row-reader';
import { DatabaseRuntime, HotRead } from '../../database/database-runtime';
import { TransactionService } from '../../database/transaction.service';
import { ApiKey } from '../api-keys/entities/api-key.entity';
import { Company } from '../companies/entities/company.entity';
import { CompanyStateEvents } from '../companies/company-state-events';
import { IpNetwork, networksOverlap, parseNetwork } from '../../common/net/ip-address';
import { allowedNetwork } from '../companies/allowed-ips';
import { ApiKeyEvents } from './api-key-events';
import { apiKeyDigest, hasApiKeyShape } from './api-key-secret';

/** How long a key found (or not) is trusted without reading it again (quality.md: at most 5 s). */
export const API_KEY_CACHE_MS = 5_000;
/** `lastUsedAt` / `lastUsedIp` are written at most this often per key. */
export const LAST_USED_EVERY_MS = 60_000;

/** A key that authenticated a request, with its company as it was read. */
export interface ApiKeyCaller {
  key: ApiKey;
  company: Company;
}

/** What the cache holds for a digest: the key with its networks, or none (boxed: lru-cache holds no null). */
interface Found {
  caller: ApiKeyCaller | null;
  networks: IpNetwork[] | null;
}

/**
 * Customer API keys on the bearer routes (platform.md "Using a key"): a key is found by the
 * SHA-256 digest of what the client sent, through a cache of at most API_KEY_CACHE_MS that a
 * revocation, a change of the key or of its company's state clears in every process (change
 * notices). Answers synchronously on a cache hit (and on SQLite), a promise otherwise.
 */
@Injectable()
export class ApiKeyAuthenticator {
  private readonly logger = new Logger(ApiKeyAuthenticator.name);
  private readonly cache = new LRUCache<string, Found>({ max: 10_000, ttl: API_KEY_CACHE_MS });
  private readonly keyColumns: EntityRowReader<ApiKey>;
  private readonly companyColumns: EntityRowReader<Company>;
  private readonly byDigest: HotRead;
  /** When this process last wrote each key's `lastUsedAt` (or found it written). */
  private readonly lastUseWritten = new LRUCache<number, number>({ max: 10_000 });

  constructor(
    @InjectDataSource() dataSource: DataSource,
    runtime: DatabaseRuntime,
    private readonly transactions: TransactionService,
    private readonly notices: ChangeNotices,
    keyEvents: ApiKeyEvents,
    companyEvents: CompanyStateEvents,
  ) {
    this.keyColumns = new EntityRowReader(dataSource, ApiKey, 'k');
    this.companyColumns = new EntityRowReader(dataSource, Company, 'co');
    this.byDigest = runtime.read(
      'api_key_by_digest',
      `SELECT ${this.keyColumns.selectList()}, ${this.companyColumns.selectList()} ` +
        `FROM api_keys k INNER JOIN companies co ON co.id = k.company_id WHERE k.digest = ?`,
    );
    keyEvents.onChange(({ apiKeyId }) => this.forget((caller) => caller.key.id === apiKeyId));
    companyEvents.onChange(({ companyId }) => this.forget((caller) => caller.company.id === companyId));
  }

  /**
   * The key and its company, or the refusal of platform.md: 401 unknown, revoked or expired; 403
   * from an address outside its allowed networks.
   */
  async authenticate(token: string, clientIp: string): Promise<ApiKeyCaller> {
    if (!hasApiKeyShape(token)) throw new UnauthorizedException('Invalid API key');
    const digest = apiKeyDigest(token);
    this.notices.catchUp();
    let found = this.cache.get(digest);
    if (!found) {
      found = await this.load(digest);
      this.cache.set(digest, found);
    }
    return this.admit(found, clientIp);
  }

  private admit({ caller, networks }: Found, clientIp: string): ApiKeyCaller {
    if (!caller) throw new UnauthorizedException('Invalid API key');
    const { key } = caller;
    if (key.revokedAt) throw new UnauthorizedException('API key revoked');
    if (key.expiresAt && key.expiresAt.getTime() <= Date.now())
      throw new UnauthorizedException('API key expired');
    if (networks && !holds(networks, clientIp)) {
      throw new ForbiddenException('API key not allowed from this address');
    }
    this.noteUse(key, clientIp);
    return caller;
  }

  private async load(digest: string): Promise<Found> {
    const row = (await this.byDigest.all([digest]))[0];
    if (!row) return { caller: null, networks: null };
    const key = this.keyColumns.read(row, 0);
    const company = this.companyColumns.read(row, this.keyColumns.width);
    key.company = company;
    const networks = key.allowedIps.length
      ? key.allowedIps.map(allowedNetwork).filter((n): n is IpNetwork => typeof n !== 'string')
      : null;
    return { caller: { key, company }, networks };
  }

  /** Writes `lastUsedAt` and `lastUsedIp` when this key's were written over a minute ago (by anyone). */
  private noteUse(key: ApiKey, clientIp: string): void {
    const now = Date.now();
    const written = Math.max(this.lastUseWritten.get(key.id) ?? 0, key.lastUsedAt?.getTime() ?? 0);
    if (now - written < LAST_USED_EVERY_MS) return;
    this.lastUseWritten.set(key.id, now);
    this.transactions.detach(() =>
      this.transactions
        .run((manager) =>
          manager
            .getRepository(ApiKey)
            .update({ id: key.id }, { lastUsedAt: new Date(now), lastUsedIp: clientIp.slice(0, 45) }),
        )
        .catch((e: unknown) =>
          this.logger.warn({ err: e }, 'Could not record when an API key was last used'),
        ),
    );
  }

  private forget(matches: (caller: ApiKeyCaller) => boolean): void {
    for (const [digest, found] of this.cache.entries()) {
      if (found.caller && matches(found.caller)) this.cache.delete(digest);
    }
  }
}

/** Whether one of the networks holds the address (however it is written: `::ffff:192.0.2.1` is `192.0.2.1`). */
function holds(networks: readonly IpNetwork[], address: string): boolean {
  const client = parseNetwork(address);
  return typeof client !== 'string' && networks.some((network) => networksOverlap(network, client));
}
