import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Brackets, EntityManager, Repository, SelectQueryBuilder } from 'typeorm';
import { EncryptionService } from '../../common/crypto/encryption.service';
import { BadRequestError, ConflictError, NotFoundError } from '../../common/errors/domain-error';
import { Page, skipFor, toPage } from '../../common/pagination/page';
import { parseSort } from '../../common/pagination/sort';
import { randomToken, sha256Hex } from '../../common/secrets';
import { AppConfig } from '../../config/app-config';
import { TransactionService } from '../../database/transaction.service';
import type { Admin } from '../admins/entities/admin.entity';
import { Billing } from '../billings/entities/billing.entity';
import { NotificationsService } from '../notifications/notifications.service';
import { Package } from '../packages/entities/package.entity';
import { User } from '../users/entities/user.entity';
import { CompaniesService } from './companies.service';
import {
  AdminUpdateCompanyDto,
  COMPANY_SORT_FIELDS,
  ListCompaniesQueryDto,
} from './dto/admin-company-requests.dto';
import { AdminCompanyDetailDto, BillingSummaryDto, ScriptUrlDto } from './dto/admin-company-response.dto';
import { CompanyDto, MemberDto, RelayCredentialsDto } from './dto/company-response.dto';
import { CompanyAuditEvent } from './entities/company-audit-event.entity';
import { Company } from './entities/company.entity';
import { RelayStatus } from './relay-status';
import { containsPattern } from '../../common/search';
import { announceSuspension } from './suspension-notices';
import { SubscriptionService } from './subscription.service';

/**
 * `relayStatus` in SQL: the rules of deriveRelayStatus (relay-status.ts) in the same order,
 * first match wins, so the list filter, its count and its paging stay in the database and
 * agree with the `relayStatus` each item shows. `:now` is bound once per request.
 */
const RELAY_STATUS_SQL = `CASE
  WHEN company.status = 'suspended' THEN 'suspended'
  WHEN company.package_uuid IS NULL OR company.period_end IS NULL THEN 'no_package'
  WHEN company.period_end <= :now THEN 'expired'
  WHEN company.used >= company.quota THEN 'quota_exceeded'
  ELSE 'active'
END`;

type Actor = Pick<Admin, 'uuid'>;

/** The admin side of the company area (`/api/v1/admins/companies`). */
@Injectable()
export class CompaniesAdminService {
  constructor(
    @InjectRepository(Company) private readonly companiesRepo: Repository<Company>,
    @InjectRepository(User) private readonly users: Repository<User>,
    @InjectRepository(Billing) private readonly billings: Repository<Billing>,
    private readonly companies: CompaniesService,
    private readonly subscriptions: SubscriptionService,
    private readonly notifications: NotificationsService,
    private readonly transactions: TransactionService,
    private readonly encryption: EncryptionService,
    private readonly config: AppConfig,
  ) {}

  async list(q: ListCompaniesQueryDto): Promise<Page<CompanyDto>> {
    const [column, direction] = parseSort(q.sort, COMPANY_SORT_FIELDS, ['createdAt', 'DESC']);
    const qb = this.companiesRepo.createQueryBuilder('company');
    if (q.status) qb.andWhere('company.status = :status', { status: q.status });
    if (q.packageUuid) qb.andWhere('company.package_uuid = :packageUuid', { packageUuid: q.packageUuid });
    if (q.relayStatus) this.whereRelayStatus(qb, q.relayStatus, new Date());
    if (q.search) {
      const pattern = containsPattern(q.search);
      qb.andWhere(
        new Brackets((w) =>
          w
            .where("LOWER(company.name) LIKE :pattern ESCAPE '\\'", { pattern })
            .orWhere("LOWER(company.relay_username) LIKE :pattern ESCAPE '\\'", { pattern })
            .orWhere(
              "EXISTS (SELECT 1 FROM users su WHERE su.company_id = company.id AND su.email LIKE :pattern ESCAPE '\\')",
              { pattern },
            ),
        ),
      );
    }
    // NULLS LAST in both directions (never-paid companies have no period end), the same on both databases.
    qb.orderBy(column, direction, 'NULLS LAST')
      .addOrderBy('company.id', direction)
      .skip(skipFor(q.page, q.limit))
      .take(q.limit);
    const [items, total] = await qb.getManyAndCount();
    return toPage(await this.companies.viewAll(items), total, q.page, q.limit);
  }

  /** The company as its users see it, with its users, its domain count and its latest billing. */
  async get(uuid: string): Promise<AdminCompanyDetailDto> {
    const company = await this.find(uuid);
    const [view, members, lastBilling] = await Promise.all([
      this.companies.view(company),
      this.users
        .createQueryBuilder('member')
        .innerJoinAndSelect('member.contact', 'contact')
        .where('member.companyId = :companyId', { companyId: company.id })
        .orderBy('member.createdAt', 'ASC')
        .addOrderBy('member.id', 'ASC')
        .getMany(),
      this.billings.findOne({
        where: { companyId: company.id },
        order: { createdAt: 'DESC', id: 'DESC' },
      }),
    ]);
    return {
      ...view,
      crmAccountId: company.crmAccountId,
      users: members.map((m) => MemberDto.fromMember(m, company.uuid)),
      // The domains area does not exist yet: no company has a sender domain, so the count is 0.
      // Once it exists this becomes a COUNT over its table.
      domainsCount: 0,
      lastBilling: lastBilling ? BillingSummaryDto.from(lastBilling) : null,
    };
  }

  /**
   * Applies the fields given, in this order, in one transaction with the company row locked:
   * `status` (+ `suspendedReason`), `packageUuid` (assigned as a payment would: a new period
   * from now, or the running period of the same package extended), `quota` (override of the
   * current period), `periodEnd` (extend only). Each change is one company_audit_events row
   * with the admin's uuid. Suspending notifies the company's users (e-mailed) and every active
   * admin and superAdmin with `company.suspended`, in the same transaction.
   */
  async update(actor: Actor, uuid: string, dto: AdminUpdateCompanyDto): Promise<AdminCompanyDetailDto> {
    const now = new Date();
    await this.transactions.run(async (em) => {
      let company = await this.lock(em, uuid);
      const audit = (action: string, detail: Record<string, unknown>) =>
        em.save(
          em.create(CompanyAuditEvent, { companyId: company.id, adminUuid: actor.uuid, action, detail }),
        );

      await this.applyStatus(em, actor, company, dto, audit);

      if (dto.packageUuid !== undefined) {
        const pkg = await em.findOne(Package, { where: { uuid: dto.packageUuid } });
        if (!pkg) throw new NotFoundError('Package not found');
        if (!pkg.isActive) throw new BadRequestError('Package is archived and cannot be assigned');
        const period = await this.subscriptions.applyPayment(
          em,
          company.id,
          { packageUuid: pkg.uuid, quota: pkg.quota, durationDays: pkg.durationDays },
          now,
        );
        const after = await em.findOneOrFail(Company, { where: { id: company.id } });
        await audit('package.assigned', {
          packageUuid: pkg.uuid,
          packageName: pkg.name,
          withoutPayment: true,
          period,
          periodStart: after.periodStart?.toISOString() ?? null,
          periodEnd: after.periodEnd?.toISOString() ?? null,
          quota: after.quota,
          previousPackageUuid: company.packageUuid,
          previousPeriodEnd: company.periodEnd?.toISOString() ?? null,
        });
        company = after;
      }

      if (dto.quota !== undefined && dto.quota !== company.quota) {
        // A warning already sent stays sent only while usage is still past its threshold under the new quota.
        const warnedAt80 = company.used * 100 >= dto.quota * 80 ? company.quotaWarnedAt80 : null;
        const warnedAt100 = company.used >= dto.quota ? company.quotaWarnedAt100 : null;
        await em.update(
          Company,
          { id: company.id },
          { quota: dto.quota, quotaWarnedAt80: warnedAt80, quotaWarnedAt100: warnedAt100 },
        );
        await audit('quota.overridden', { from: company.quota, to: dto.quota, used: company.used });
        company.quota = dto.quota;
      }

      if (dto.periodEnd !== undefined) {
        const periodEnd = new Date(dto.periodEnd);
        if (!company.packageUuid || !company.periodEnd) {
          throw new ConflictError('The company has no package: assign one before extending its period');
        }
        if (periodEnd.getTime() <= now.getTime())
          throw new BadRequestError('periodEnd must be in the future');
        if (periodEnd.getTime() <= company.periodEnd.getTime()) {
          throw new BadRequestError('periodEnd must be later than the current end of the period');
        }
        await em.update(Company, { id: company.id }, { periodEnd });
        await audit('period.extended', {
          from: company.periodEnd.toISOString(),
          to: periodEnd.toISOString(),
        });
      }
    });
    return this.get(uuid);
  }

  /**
   * A new script token (32 random bytes, base64url): stored as its SHA-256 for the public
   * lookup and AES-256-GCM-encrypted so the owner can see the URL again. The old URL stops
   * working at once.
   */
  async rotateScriptToken(actor: Actor, uuid: string): Promise<ScriptUrlDto> {
    const company = await this.find(uuid);
    const token = randomToken(32);
    await this.transactions.run(async (em) => {
      await em.update(
        Company,
        { id: company.id },
        { scriptTokenHash: sha256Hex(token), scriptTokenCipher: this.encryption.encrypt(token) },
      );
      await em.save(
        em.create(CompanyAuditEvent, {
          companyId: company.id,
          adminUuid: actor.uuid,
          action: 'script_token.rotated',
          detail: null,
        }),
      );
    });
    return { scriptUrl: `${this.config.publicUrl}/public/company/script/${token}` };
  }

  /** As the owner's reset (a new password shown once, the old one refused), recorded in the audit events. */
  async resetRelayPassword(actor: Actor, uuid: string): Promise<RelayCredentialsDto> {
    const company = await this.find(uuid);
    const { relayPassword, relayPasswordHash } = await this.companies.newRelayPassword();
    await this.transactions.run(async (em) => {
      await em.update(Company, { id: company.id }, { relayPasswordHash });
      await em.save(
        em.create(CompanyAuditEvent, {
          companyId: company.id,
          adminUuid: actor.uuid,
          action: 'relay_password.reset',
          detail: null,
        }),
      );
    });
    return { relayUsername: company.relayUsername, relayPassword };
  }

  private async applyStatus(
    em: EntityManager,
    actor: Actor,
    company: Company,
    dto: AdminUpdateCompanyDto,
    audit: (action: string, detail: Record<string, unknown>) => Promise<unknown>,
  ): Promise<void> {
    const status = dto.status ?? company.status;
    if (dto.suspendedReason !== undefined && status !== 'suspended') {
      throw new BadRequestError('suspendedReason applies only to a suspended company');
    }
    if (status === company.status) {
      if (dto.suspendedReason !== undefined && dto.suspendedReason !== company.suspendedReason) {
        await em.update(Company, { id: company.id }, { suspendedReason: dto.suspendedReason });
        await audit('suspension.reason_changed', { from: company.suspendedReason, to: dto.suspendedReason });
        company.suspendedReason = dto.suspendedReason;
      }
      return;
    }
    const suspendedReason = status === 'suspended' ? (dto.suspendedReason ?? null) : null;
    await em.update(Company, { id: company.id }, { status, suspendedReason });
    await audit('status.changed', { from: company.status, to: status, reason: suspendedReason });
    company.status = status;
    company.suspendedReason = suspendedReason;
    if (status !== 'suspended') return;

    const reason = suspendedReason ? ` Reason: ${suspendedReason}.` : '';
    await announceSuspension(this.notifications, em, company, {
      usersBody: `${company.name} has been suspended by an administrator: the relay no longer accepts its mail.${reason} You can still sign in, see your data and pay.`,
      adminsTitle: `Company suspended: ${company.name}`,
      adminsBody: `${company.name} was suspended by an administrator.${reason}`,
      adminsData: { byAdminUuid: actor.uuid },
    });
  }

  private whereRelayStatus(qb: SelectQueryBuilder<Company>, relayStatus: RelayStatus, now: Date): void {
    qb.andWhere(`(${RELAY_STATUS_SQL}) = :relayStatus`, { relayStatus, now });
  }

  private async lock(em: EntityManager, uuid: string): Promise<Company> {
    const qb = em
      .getRepository(Company)
      .createQueryBuilder('company')
      .where('company.uuid = :uuid', { uuid });
    if (this.transactions.isPostgres) qb.setLock('pessimistic_write');
    const company = await qb.getOne();
    if (!company) throw new NotFoundError('Company not found');
    return company;
  }

  private async find(uuid: string): Promise<Company> {
    const company = await this.companiesRepo.findOne({ where: { uuid } });
    if (!company) throw new NotFoundError('Company not found');
    return company;
  }
}
