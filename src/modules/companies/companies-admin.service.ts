import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Brackets, EntityManager, Repository, SelectQueryBuilder } from 'typeorm';
import { BadRequestError, NotFoundError } from '../../common/errors/domain-error';
import { Page, skipFor, toPage } from '../../common/pagination/page';
import { parseSort } from '../../common/pagination/sort';
import { TransactionService } from '../../database/transaction.service';
import type { Admin } from '../admins/entities/admin.entity';
import { LastBillings } from '../billings/billing-records';
import { PackagesService } from '../packages/packages.service';
import { CompanyMembersService } from '../users/company-members.service';
import { CompaniesService } from './companies.service';
import { CompanyMailboxSettingsService } from './company-mailbox-settings';
import { DomainsService } from '../domains/domains.service';
import {
  AdminUpdateCompanyDto,
  COMPANY_SORT_FIELDS,
  ListCompaniesQueryDto,
} from './dto/admin-company-requests.dto';
import { AdminCompanyDetailDto, BillingSummaryDto, ScriptUrlDto } from './dto/admin-company-response.dto';
import { CompanyDto, MemberDto, RelayCredentialsDto } from './dto/company-response.dto';
import { Company } from './entities/company.entity';
import { RelayStatus, relayStatusSql } from './relay-status';
import { containsPattern } from '../../common/search';
import { CompanyStateService } from './company-state.service';

/**
 * `relayStatus` in SQL, built from the rules of deriveRelayStatus, so the list filter, its
 * count and its paging stay in the database and agree with the `relayStatus` each item shows.
 */
const RELAY_STATUS_SQL = relayStatusSql('company');

type Actor = Pick<Admin, 'uuid'>;

/** The admin side of the company area (`/api/v1/admins/companies`). */
@Injectable()
export class CompaniesAdminService {
  constructor(
    @InjectRepository(Company) private readonly companiesRepo: Repository<Company>,
    private readonly members: CompanyMembersService,
    private readonly billings: LastBillings,
    private readonly domains: DomainsService,
    private readonly companies: CompaniesService,
    private readonly state: CompanyStateService,
    private readonly packages: PackagesService,
    private readonly transactions: TransactionService,
    private readonly mailboxSettings: CompanyMailboxSettingsService,
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
    const [view, members, lastBilling, domainsCount] = await Promise.all([
      this.companies.view(company),
      this.members.all(company.id),
      this.billings.lastOf(company.id),
      this.domains.countOfCompany(company.id),
    ]);
    return {
      ...view,
      crmAccountId: company.crmAccountId,
      users: members.map((m) => MemberDto.fromMember(m, company.uuid)),
      domainsCount,
      lastBilling: lastBilling ? BillingSummaryDto.from(lastBilling) : null,
    };
  }

  /**
   * Applies the fields given, in this order, in one transaction with the company row locked:
   * `status` (+ `suspendedReason`), `packageUuid` (assigned as a payment would: a new period
   * from now, or the running period of the same package extended), `quota` (override of the
   * current period), `periodEnd` (extend only). Each change is one company_audit_events row
   * with the admin's uuid. Suspending notifies the company's users (e-mailed) and every active
   * admin and superAdmin with `company.suspended`, in the same transaction; the e-mails and the
   * CompanyStateEvents changes leave after the commit, so a PATCH refused by a later field
   * announces nothing. The writes themselves are CompanyStateService's.
   */
  async update(actor: Actor, uuid: string, dto: AdminUpdateCompanyDto): Promise<AdminCompanyDetailDto> {
    const now = new Date();
    await this.transactions.run(async (em) => {
      let company = await this.state.lock(em, { uuid });

      await this.applyStatus(em, actor, company, dto);

      if (dto.packageUuid !== undefined) {
        const pkg = await this.packages.findByUuid(dto.packageUuid, em);
        if (!pkg) throw new NotFoundError('Package not found');
        if (!pkg.isActive) throw new BadRequestError('Package is archived and cannot be assigned');
        const before = company;
        const applied = await this.state.applyPayment(
          em,
          company.id,
          { packageUuid: pkg.uuid, quota: pkg.quota, durationDays: pkg.durationDays },
          now,
        );
        company = applied.company;
        await this.state.audit(em, company.id, actor.uuid, 'package.assigned', {
          packageUuid: pkg.uuid,
          packageName: pkg.name,
          withoutPayment: true,
          period: applied.period,
          periodStart: company.periodStart?.toISOString() ?? null,
          periodEnd: company.periodEnd?.toISOString() ?? null,
          quota: company.quota,
          previousPackageUuid: before.packageUuid,
          previousPeriodEnd: before.periodEnd?.toISOString() ?? null,
        });
      }

      if (dto.quota !== undefined) await this.state.overrideQuota(em, company, dto.quota, actor.uuid);

      if (dto.periodEnd !== undefined) {
        await this.state.extendPeriod(em, company, new Date(dto.periodEnd), actor.uuid, now);
      }
    });
    return this.get(uuid);
  }

  /** A new script token for the company (the old URL stops working), recorded in its audit events. */
  async rotateScriptToken(actor: Actor, uuid: string): Promise<ScriptUrlDto> {
    const company = await this.find(uuid);
    return { scriptUrl: await this.mailboxSettings.rotateScriptToken(company.id, actor.uuid) };
  }

  /** As the owner's reset (a new password shown once, the old one refused), recorded in the audit events. */
  async resetRelayPassword(actor: Actor, uuid: string): Promise<RelayCredentialsDto> {
    const company = await this.find(uuid);
    const { relayPassword, relayPasswordHash } = await this.companies.newRelayPassword();
    await this.transactions.run(async (em) => {
      await em.update(Company, { id: company.id }, { relayPasswordHash });
      await this.state.audit(em, company.id, actor.uuid, 'relay_password.reset', null);
    });
    return { relayUsername: company.relayUsername, relayPassword };
  }

  private async applyStatus(
    em: EntityManager,
    actor: Actor,
    company: Company,
    dto: AdminUpdateCompanyDto,
  ): Promise<void> {
    const status = dto.status ?? company.status;
    if (dto.suspendedReason !== undefined && status !== 'suspended') {
      throw new BadRequestError('suspendedReason applies only to a suspended company');
    }
    if (status === company.status) {
      if (dto.suspendedReason !== undefined) {
        await this.state.changeSuspendedReason(em, company, dto.suspendedReason, actor.uuid);
      }
      return;
    }
    const suspendedReason = status === 'suspended' ? (dto.suspendedReason ?? null) : null;
    const reason = suspendedReason ? ` Reason: ${suspendedReason}.` : '';
    await this.state.changeStatus(em, company, {
      status,
      reason: suspendedReason,
      adminUuid: actor.uuid,
      notice: {
        usersBody: `${company.name} has been suspended by an administrator: the relay no longer accepts its mail.${reason} You can still sign in, see your data and pay.`,
        adminsTitle: `Company suspended: ${company.name}`,
        adminsBody: `${company.name} was suspended by an administrator.${reason}`,
        adminsData: { byAdminUuid: actor.uuid },
      },
    });
  }

  private whereRelayStatus(qb: SelectQueryBuilder<Company>, relayStatus: RelayStatus, now: Date): void {
    qb.andWhere(`(${RELAY_STATUS_SQL}) = :relayStatus`, { relayStatus, now });
  }

  private async find(uuid: string): Promise<Company> {
    const company = await this.companiesRepo.findOne({ where: { uuid } });
    if (!company) throw new NotFoundError('Company not found');
    return company;
  }
}
