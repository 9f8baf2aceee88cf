import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Not, Repository } from 'typeorm';
import { BadRequestError, ConflictError, NotFoundError } from '../../common/errors/domain-error';
import { Page, skipFor, toPage } from '../../common/pagination/page';
import { isUniqueViolation } from '../../database/database-errors';
import { SqlDialect } from '../../database/sql-dialect';
import { TransactionService } from '../../database/transaction.service';
import { ApiKeyEvents } from '../auth/api-key-events';
import { newApiKey } from '../auth/api-key-secret';
import { normalizeAllowedIps } from '../companies/allowed-ips';
import { CompaniesService } from '../companies/companies.service';
import { DomainsService } from '../domains/domains.service';
import { CreateApiKeyDto, ListApiKeysQueryDto, UpdateApiKeyDto } from './dto/api-key-requests.dto';
import { ApiKeyDto, CreatedApiKeyDto } from './dto/api-key-response.dto';
import { ApiKey } from './entities/api-key.entity';

/** Keys in use (not revoked) a company may hold at once. */
export const MAX_API_KEYS_PER_COMPANY = 50;
/** How far ahead a key's expiry may be set. */
const MAX_EXPIRY_MS = 2 * 366 * 86_400_000;
export const API_KEY_NOT_FOUND = 'API key not found';

/**
 * Customers' API keys (platform.md "API keys"): made by the company's owner, listed and revoked
 * by the owner or an admin. A revocation or change is announced to every process after its
 * commit (ApiKeyEvents), so the key's next request is judged on what was committed.
 */
@Injectable()
export class ApiKeysService {
  constructor(
    @InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>,
    private readonly transactions: TransactionService,
    private readonly dialect: SqlDialect,
    private readonly events: ApiKeyEvents,
    private readonly domains: DomainsService,
    private readonly companies: CompaniesService,
  ) {}

  async create(
    company: { id: number; uuid: string },
    createdByUserUuid: string,
    dto: CreateApiKeyDto,
  ): Promise<CreatedApiKeyDto> {
    const domains = await this.domains.companyDomainsAmong(company.id, dto.domains ?? []);
    const expiresAt = dto.expiresAt === undefined ? null : futureExpiry(dto.expiresAt);
    const { key, digest, hint } = newApiKey();
    const row = this.keys.create({
      companyId: company.id,
      name: dto.name,
      scope: dto.scope,
      domains,
      allowedIps: normalizeAllowedIps(dto.allowedIps ?? []),
      digest,
      hint,
      expiresAt,
      lastUsedAt: null,
      lastUsedIp: null,
      createdByUserUuid,
      revokedAt: null,
    });
    try {
      await this.transactions.run(async (em) => {
        // Two makes at the limit - 1: the second counts after the first commits.
        await this.dialect.lockName(em, `api-keys-of-company:${company.id}`);
        const inUse = await em.countBy(ApiKey, { companyId: company.id, revokedAt: IsNull() });
        if (inUse >= MAX_API_KEYS_PER_COMPANY) {
          throw new ConflictError(
            `API key limit reached: a company has at most ${MAX_API_KEYS_PER_COMPANY} keys in use; revoke one first`,
          );
        }
        await em.insert(ApiKey, row);
      });
    } catch (e: unknown) {
      // 32 random bytes do not collide; a unique violation here is not the caller's to fix.
      if (isUniqueViolation(e)) throw new Error('API key digest collision');
      throw e;
    }
    const saved = await this.keys.findOneByOrFail({ id: row.id });
    return { apiKey: await this.toDto(saved, company.uuid), key };
  }

  async list(company: { id: number; uuid: string }, query: ListApiKeysQueryDto): Promise<Page<ApiKeyDto>> {
    const [items, total] = await this.keys.findAndCount({
      where: { companyId: company.id, revokedAt: query.revoked ? Not(IsNull()) : IsNull() },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: skipFor(query.page, query.limit),
      take: query.limit,
    });
    const names = new Set(await this.domains.namesOfCompany(company.id));
    return toPage(
      items.map((key) => ApiKeyDto.from(withExistingDomains(key, names), company.uuid)),
      total,
      query.page,
      query.limit,
    );
  }

  view(key: ApiKey, companyUuid: string): Promise<ApiKeyDto> {
    return this.toDto(key, companyUuid);
  }

  async update(key: ApiKey, companyUuid: string, dto: UpdateApiKeyDto): Promise<ApiKeyDto> {
    if (key.revokedAt) throw new ConflictError('API key revoked: make a new one');
    const changes: Partial<ApiKey> = {};
    if (dto.name !== undefined) changes.name = dto.name;
    if (dto.domains !== undefined)
      changes.domains = await this.domains.companyDomainsAmong(key.companyId, dto.domains);
    if (dto.allowedIps !== undefined) changes.allowedIps = normalizeAllowedIps(dto.allowedIps);
    await this.transactions.run(async (em, scope) => {
      await em.update(ApiKey, { id: key.id }, changes);
      scope.afterCommit(() => this.events.emit({ apiKeyId: key.id }));
    });
    return this.toDto(await this.keys.findOneByOrFail({ id: key.id }), companyUuid);
  }

  /** Revokes the key (again: nothing changes); its next request answers 401 in every process. */
  async revoke(key: ApiKey): Promise<void> {
    if (key.revokedAt) return;
    await this.transactions.run(async (em, scope) => {
      await em.update(ApiKey, { id: key.id, revokedAt: IsNull() }, { revokedAt: new Date() });
      scope.afterCommit(() => this.events.emit({ apiKeyId: key.id }));
    });
  }

  /** An admin's view of a company's keys (404 for an unknown company). */
  async listOfCompany(companyUuid: string, query: ListApiKeysQueryDto): Promise<Page<ApiKeyDto>> {
    return this.list({ id: await this.companies.idOf(companyUuid), uuid: companyUuid }, query);
  }

  /** An admin revokes a company's key (404 when the key is not that company's). */
  async revokeOfCompany(companyUuid: string, keyUuid: string): Promise<void> {
    const companyId = await this.companies.idOf(companyUuid);
    const key = await this.keys.findOneBy({ uuid: keyUuid, companyId });
    if (!key) throw new NotFoundError(API_KEY_NOT_FOUND);
    await this.revoke(key);
  }

  private async toDto(key: ApiKey, companyUuid: string): Promise<ApiKeyDto> {
    const names = new Set(await this.domains.namesOfCompany(key.companyId));
    return ApiKeyDto.from(withExistingDomains(key, names), companyUuid);
  }
}

/** A key's domains as shown: those still among the company's (a deleted domain drops out). */
function withExistingDomains(key: ApiKey, names: ReadonlySet<string>): ApiKey {
  return { ...key, domains: key.domains.filter((name) => names.has(name)) } as ApiKey;
}

/** A requested expiry: in the future, at most two years ahead (400 otherwise). */
function futureExpiry(text: string): Date {
  const at = new Date(text);
  const now = Date.now();
  if (Number.isNaN(at.getTime()) || at.getTime() <= now)
    throw new BadRequestError('expiresAt must be in the future');
  if (at.getTime() - now > MAX_EXPIRY_MS)
    throw new BadRequestError('expiresAt must be at most 2 years ahead');
  return at;
}
