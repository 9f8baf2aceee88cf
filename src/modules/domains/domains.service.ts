import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { Brackets, EntityManager, Repository } from 'typeorm';
import { EncryptionService } from '../../common/crypto/encryption.service';
import { BadRequestError, ConflictError, NotFoundError } from '../../common/errors/domain-error';
import { Page, skipFor, toPage } from '../../common/pagination/page';
import { AppConfig } from '../../config/app-config';
import { isUniqueViolation } from '../../database/database-errors';
import { WebhookOutbox } from '../webhooks/webhook-outbox';
import { SqlDialect } from '../../database/sql-dialect';
import { DatabaseRuntime } from '../../database/database-runtime';
import { TransactionService } from '../../database/transaction.service';
import { Job } from '../jobs/job.decorator';
import { Notifier } from '../notifications/notifier';
import { CompanyMembersService } from '../users/company-members.service';
import type { Company } from '../companies/entities/company.entity';
import { CompanyDomainPages } from './company-domain-pages';
import { DkimKeyPairs } from './dkim-key-pairs';
import { lostSpfOrDkim, passes, recordsToPublish } from './dns-records';
import { DomainDnsChecker } from './domain-dns-checker';
import { DomainEvents } from './domain-events';
import { normaliseDomainName } from './domain-name';
import { AdminListDomainsQueryDto, ListDomainsQueryDto } from './dto/domain-requests.dto';
import { DomainDto } from './dto/domain-response.dto';
import { DnsRecord, Domain, DomainStatus } from './entities/domain.entity';

export const DOMAIN_NOT_FOUND = 'Domain not found';
const ALREADY_ADDED = 'Domain already added';
const VERIFIED_ELSEWHERE = 'Domain is verified by another company';
/** Domains re-checked per query page by the daily job. */
const RECHECK_BATCH = 100;

/**
 * Sender domains (resources.md "Domain"): adding one makes its DKIM key and the records to
 * publish; a verification checks them live and moves the status; the daily `recheck-domains`
 * job re-checks verified and failed ones.
 */
@Injectable()
export class DomainsService {
  constructor(
    @InjectRepository(Domain) private readonly domains: Repository<Domain>,
    private readonly transactions: TransactionService,
    private readonly dialect: SqlDialect,
    private readonly config: AppConfig,
    private readonly keyPairs: DkimKeyPairs,
    private readonly encryption: EncryptionService,
    private readonly dns: DomainDnsChecker,
    private readonly events: DomainEvents,
    private readonly notifications: Notifier,
    private readonly members: CompanyMembersService,
    private readonly webhooks: WebhookOutbox,
    runtime: DatabaseRuntime,
  ) {
    this.pages = new CompanyDomainPages(domains.manager.dataSource, runtime);
  }

  private readonly pages: CompanyDomainPages;

  async add(companyId: number, input: string): Promise<DomainDto> {
    const normalised = normaliseDomainName(input);
    if ('problem' in normalised) throw new BadRequestError(normalised.problem);
    const { name } = normalised;
    // Refused before a key is made for it; checked again under the company's lock below.
    await this.refuseTaken(companyId, name);
    this.refuseOverLimit(await this.domains.countBy({ companyId }));
    // One key at a time per process, off the thread pool argon2 needs (DkimKeyPairs).
    const { publicKeyBase64: dkimPublicKey, privateKeyPem } = await this.keyPairs.make();
    const now = new Date();
    const dkimSelector = `rs${now.getUTCFullYear()}${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
    const verificationToken = randomBytes(16).toString('hex');
    const env = this.config.env;
    const domain = this.domains.create({
      companyId,
      name,
      status: 'pending',
      verificationToken,
      dkimSelector,
      dkimPublicKey,
      dkimPrivateKey: this.encryption.encrypt(privateKeyPem),
      records: recordsToPublish({
        domain: name,
        verificationToken,
        dkimSelector,
        dkimPublicKey,
        spfInclude: env.SPF_INCLUDE,
        returnPathPrefix: env.RETURN_PATH_PREFIX,
        returnPathHost: env.RETURN_PATH_HOST,
      }),
      lastCheckedAt: null,
      verifiedAt: null,
    });
    try {
      await this.transactions.run(async (em) => {
        // Two adds of one company at its limit - 1: the second counts after the first commits.
        await this.dialect.lockName(em, `domains-of-company:${companyId}`);
        this.refuseOverLimit(await em.countBy(Domain, { companyId }));
        await em.insert(Domain, domain);
      });
    } catch (e: unknown) {
      if (isUniqueViolation(e)) throw new ConflictError(ALREADY_ADDED);
      throw e;
    }
    return this.view(domain.id);
  }

  /**
   * One company's domains, newest first: the customer route, which an API key may call as often
   * as its rate limit lets it (CompanyDomainPages: on PostgreSQL the pages asked for at the same
   * moment share one statement).
   */
  async listOfCompany(company: Company, q: ListDomainsQueryDto): Promise<Page<DomainDto>> {
    const { domains, total } = await this.pages.read({
      companyId: company.id,
      status: q.status,
      limit: q.limit,
      offset: skipFor(q.page, q.limit),
    });
    const items = domains.map((domain) => {
      domain.company = company;
      return DomainDto.from(domain);
    });
    return toPage(items, total, q.page, q.limit);
  }

  /** For the admin routes: one company's domains (by uuid) or every domain, newest first. */
  async list(
    scope: { companyUuid?: string },
    q: ListDomainsQueryDto & Partial<Pick<AdminListDomainsQueryDto, 'search'>>,
  ): Promise<Page<DomainDto>> {
    const qb = this.withCompanyUuid();
    if (scope.companyUuid !== undefined)
      qb.andWhere('company.uuid = :companyUuid', { companyUuid: scope.companyUuid });
    if (q.status) qb.andWhere('domain.status = :status', { status: q.status });
    if (q.search) {
      const needle = q.search
        .trim()
        .toLowerCase()
        .replace(/[\\%_]/g, (c) => `\\${c}`);
      qb.andWhere(
        new Brackets((w) => w.where("domain.name LIKE :needle ESCAPE '\\'", { needle: `%${needle}%` })),
      );
    }
    const [items, total] = await qb
      .orderBy('domain.createdAt', 'DESC')
      .addOrderBy('domain.id', 'DESC')
      .skip(skipFor(q.page, q.limit))
      .take(q.limit)
      .getManyAndCount();
    return toPage(
      items.map((d) => DomainDto.from(d)),
      total,
      q.page,
      q.limit,
    );
  }

  async view(id: number): Promise<DomainDto> {
    const domain = await this.withCompanyUuid().where('domain.id = :id', { id }).getOne();
    if (!domain) throw new NotFoundError(DOMAIN_NOT_FOUND);
    return DomainDto.from(domain);
  }

  /** For the admin routes: the domain with this uuid, whoever owns it (404 when none). */
  async findByUuid(uuid: string): Promise<Domain> {
    const domain = await this.domains.findOne({ where: { uuid } });
    if (!domain) throw new NotFoundError(DOMAIN_NOT_FOUND);
    return domain;
  }

  /** A live DNS check of every record; the status follows (see `transition`). */
  async verify(domain: Domain): Promise<DomainDto> {
    await this.checkAndApply(domain);
    return this.view(domain.id);
  }

  async remove(domain: Domain): Promise<void> {
    await this.transactions.run(async (em, scope) => {
      await em.delete(Domain, { id: domain.id });
      if (domain.status === 'verified') {
        scope.afterCommit(() => this.events.emit({ companyId: domain.companyId, name: domain.name }));
      }
    });
  }

  /** The names of the company's domains, whatever their status. */
  async namesOfCompany(companyId: number): Promise<string[]> {
    const rows = await this.domains.find({ where: { companyId }, select: { name: true } });
    return rows.map((d) => d.name);
  }

  /**
   * The names given (by an API key or a webhook), normalised; each must be one of the company's
   * domains (400 naming the first that is not).
   */
  async companyDomainsAmong(companyId: number, given: readonly string[]): Promise<string[]> {
    if (given.length === 0) return [];
    const names = new Set(await this.namesOfCompany(companyId));
    const result: string[] = [];
    for (const input of given) {
      const normalised = normaliseDomainName(input);
      const name = 'name' in normalised ? normalised.name : input;
      if (!names.has(name))
        throw new BadRequestError(`domains: ${input} is not one of the company's domains`);
      if (!result.includes(name)) result.push(name);
    }
    return result;
  }

  countOfCompany(companyId: number): Promise<number> {
    return this.domains.countBy({ companyId });
  }

  /** The `recheck-domains` job: verified and failed domains checked again; returns how many changed status. */
  @Job('recheck-domains')
  async recheckAll(): Promise<number> {
    let changed = 0;
    for (let lastId = 0; ;) {
      const page = await this.domains
        .createQueryBuilder('domain')
        .where('domain.id > :lastId', { lastId })
        .andWhere("domain.status IN ('verified', 'failed')")
        .orderBy('domain.id', 'ASC')
        .take(RECHECK_BATCH)
        .getMany();
      if (!page.length) return changed;
      for (const domain of page) {
        try {
          if (await this.checkAndApply(domain)) changed += 1;
        } catch (e: unknown) {
          // A domain another company verified meanwhile stays as it was; the others go on.
          if (!(e instanceof ConflictError)) throw e;
        }
      }
      lastId = page[page.length - 1].id;
    }
  }

  /**
   * Checks the records and stores them with the status they lead to; returns whether the status
   * changed. Becoming verified or failed is announced (DomainEvents, notifications) after the commit.
   */
  private async checkAndApply(domain: Domain): Promise<boolean> {
    const records = await this.dns.check(domain);
    const next = transition(domain.status, records);
    const now = new Date();
    try {
      await this.transactions.run(async (em, scope) => {
        const update: Partial<Domain> = { records, lastCheckedAt: now, status: next };
        if (next === 'verified' && domain.status !== 'verified') update.verifiedAt = now;
        const result = await em.update(Domain, { id: domain.id }, update);
        if (!result.affected) throw new NotFoundError(DOMAIN_NOT_FOUND);
        if (next === domain.status) return;
        if (next === 'verified' || domain.status === 'verified') {
          scope.afterCommit(() => this.events.emit({ companyId: domain.companyId, name: domain.name }));
        }
        if (next === 'verified' || next === 'failed') {
          await this.notifyOwners(em, domain, next);
          await this.webhooks.emit(em, [
            {
              companyId: domain.companyId,
              type: next === 'verified' ? 'domain.verified' : 'domain.failed',
              data: {
                domain: domain.name,
                domainUuid: domain.uuid,
                status: next,
                records: records.map(({ purpose, status, detail }) => ({ purpose, status, detail })),
              },
            },
          ]);
        }
      });
    } catch (e: unknown) {
      if (isUniqueViolation(e)) throw new ConflictError(VERIFIED_ELSEWHERE);
      throw e;
    }
    const changed = next !== domain.status;
    Object.assign(domain, { records, lastCheckedAt: now, status: next });
    return changed;
  }

  private async notifyOwners(
    em: EntityManager,
    domain: Domain,
    status: 'verified' | 'failed',
  ): Promise<void> {
    const owners = await this.members.activeOwnerIds(domain.companyId, em);
    await this.notifications.notifyUsers(
      owners,
      status === 'verified'
        ? {
            type: 'domain.verified',
            title: `${domain.name} is verified`,
            body: `${domain.name} passed its DNS checks: mail from it may be relayed.`,
            data: { domainUuid: domain.uuid, name: domain.name },
          }
        : {
            type: 'domain.failed',
            title: `${domain.name} failed its DNS check`,
            body: `${domain.name} lost its SPF or DKIM record: mail from it is refused until the records are published again.`,
            data: { domainUuid: domain.uuid, name: domain.name },
          },
      em,
    );
  }

  private refuseOverLimit(count: number): void {
    const limit = this.config.env.MAX_DOMAINS_PER_COMPANY;
    if (count >= limit) {
      throw new ConflictError(`Domain limit reached: a company has at most ${limit} domains`);
    }
  }

  /**
   * Locks the company's row for the rest of the transaction (PostgreSQL; SQLite runs one
   * transaction at a time). CompanyStateService.lockRow does this for the other areas, but
   * CompaniesModule imports this module, so the row is reached through the domains' own
   * relation to their company (as `withCompanyUuid` joins it), read by id only.
   */
  private async refuseTaken(companyId: number, name: string): Promise<void> {
    const existing = await this.domains.find({
      where: [
        { companyId, name },
        { name, status: 'verified' },
      ],
      select: { id: true, companyId: true },
    });
    if (existing.some((d) => d.companyId === companyId)) throw new ConflictError(ALREADY_ADDED);
    if (existing.length) throw new ConflictError(VERIFIED_ELSEWHERE);
  }

  private withCompanyUuid() {
    return this.domains
      .createQueryBuilder('domain')
      .innerJoin('domain.company', 'company')
      .addSelect('company.uuid');
  }
}

/**
 * The status after a check: verified when ownership, SPF and DKIM pass; a verified domain that
 * lost SPF or DKIM fails; otherwise it stays as it was (a failing check leaves pending pending).
 */
export function transition(current: DomainStatus, records: readonly DnsRecord[]): DomainStatus {
  if (passes(records)) return 'verified';
  if (current === 'verified' && lostSpfOrDkim(records)) return 'failed';
  return current;
}
