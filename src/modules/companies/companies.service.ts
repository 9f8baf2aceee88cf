import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Between, In, Repository } from 'typeorm';
import { BadRequestError, NotFoundError } from '../../common/errors/domain-error';
import { PackagesService } from '../packages/packages.service';
import { utcDayOf } from '../../common/validation/date-filter';
import { normalizeAllowedIps } from './allowed-ips';
import { CompanyStateEvents } from './company-state-events';
import { newRelayPassword, relayPasswordDigest } from './relay-credentials';
import { AllowedIpsDto, UpdateCompanyDto, UsageQueryDto } from './dto/company-requests.dto';
import {
  AllowedIpsResultDto,
  CompanyDto,
  DailyUsageDto,
  RelayCredentialsDto,
  UsageDto,
} from './dto/company-response.dto';
import { CompanyUsageDay } from './entities/company-usage-day.entity';
import { Company } from './entities/company.entity';

const DAY_MS = 86_400_000;
/** The widest usage window one request may ask for (a year and a day, like the reports). */
const MAX_USAGE_DAYS = 366;
/** The default window of a company that never paid. */
const DEFAULT_USAGE_DAYS = 30;

/** The customer side of the company area; the admin side reuses `view` and `resetRelayPassword`. */
@Injectable()
export class CompaniesService {
  constructor(
    @InjectRepository(Company) private readonly companies: Repository<Company>,
    @InjectRepository(CompanyUsageDay) private readonly usageDays: Repository<CompanyUsageDay>,
    private readonly packages: PackagesService,
    private readonly stateEvents: CompanyStateEvents,
  ) {}

  async get(companyId: number): Promise<CompanyDto> {
    return this.view(await this.find(companyId));
  }

  /** The API view of companies, with their package names read in one query. */
  async viewAll(companies: Company[]): Promise<CompanyDto[]> {
    const uuids = [...new Set(companies.map((c) => c.packageUuid).filter((u): u is string => !!u))];
    const names = await this.packages.namesOf(uuids);
    return companies.map((c) =>
      CompanyDto.from(c, c.packageUuid ? (names.get(c.packageUuid) ?? null) : null),
    );
  }

  async view(company: Company): Promise<CompanyDto> {
    return (await this.viewAll([company]))[0];
  }

  /** Optional text fields given as `null` or `""` are cleared. */
  async update(companyId: number, dto: UpdateCompanyDto): Promise<CompanyDto> {
    const changes: Partial<Company> = {};
    if (dto.name !== undefined) changes.name = dto.name;
    if (dto.country !== undefined) changes.country = dto.country;
    for (const field of ['legalName', 'taxId', 'address', 'city', 'phone', 'website'] as const) {
      if (dto[field] !== undefined) changes[field] = dto[field] || null;
    }
    if (Object.keys(changes).length) await this.companies.update({ id: companyId }, changes);
    return this.get(companyId);
  }

  /**
   * Quota figures of the current period and the messages counted per UTC day in [from, to]
   * (default: from the start of the current period, or the last 30 days, to today). Every day
   * of the window is listed, days without mail with 0.
   */
  async usage(companyId: number, query: UsageQueryDto): Promise<UsageDto> {
    const company = await this.find(companyId);
    const today = new Date().toISOString().slice(0, 10);
    const to = query.to ? utcDayOf(query.to)! : today;
    const defaultFrom =
      company.packageUuid && company.periodStart
        ? company.periodStart.toISOString().slice(0, 10)
        : new Date(Date.parse(to) - (DEFAULT_USAGE_DAYS - 1) * DAY_MS).toISOString().slice(0, 10);
    let from = query.from ? utcDayOf(query.from)! : defaultFrom;
    if (from > to) {
      if (query.from) throw new BadRequestError('from must not be after to');
      from = to; // only `to` was given, before the default start: the window is that one day
    }
    const days = (Date.parse(to) - Date.parse(from)) / DAY_MS + 1;
    if (days > MAX_USAGE_DAYS) throw new BadRequestError(`The range may span at most ${MAX_USAGE_DAYS} days`);

    const rows = await this.usageDays.find({
      where: { companyId, day: Between(from, to) },
      order: { day: 'ASC' },
    });
    const counts = new Map(rows.map((r) => [r.day, r.count]));
    const daily: DailyUsageDto[] = [];
    for (let t = Date.parse(from); t <= Date.parse(to); t += DAY_MS) {
      const date = new Date(t).toISOString().slice(0, 10);
      daily.push({ date, count: counts.get(date) ?? 0 });
    }
    const paid = company.packageUuid !== null;
    return {
      quota: paid ? company.quota : 0,
      used: paid ? company.used : 0,
      remaining: paid ? Math.max(0, company.quota - company.used) : 0,
      periodStart: paid ? company.periodStart : null,
      periodEnd: paid ? company.periodEnd : null,
      daily,
    };
  }

  /**
   * A new random relay password (24 bytes, base64url), stored only as its SHA-256 digest; the
   * previous one stops working at once. The plain password is returned this one time.
   */
  async resetRelayPassword(companyId: number): Promise<RelayCredentialsDto> {
    const company = await this.find(companyId);
    const { relayPassword, relayPasswordHash } = await this.newRelayPassword();
    await this.companies.update({ id: companyId }, { relayPasswordHash });
    return { relayUsername: company.relayUsername, relayPassword };
  }

  /** A random relay password and its digest (RelayCredentials checks SMTP AUTH against it). */
  newRelayPassword(): Promise<{ relayPassword: string; relayPasswordHash: string }> {
    const relayPassword = newRelayPassword();
    return Promise.resolve({ relayPassword, relayPasswordHash: relayPasswordDigest(relayPassword) });
  }

  async setAllowedIps(companyId: number, dto: AllowedIpsDto): Promise<AllowedIpsResultDto> {
    const ips = normalizeAllowedIps(dto.ips);
    await this.companies.update({ id: companyId }, { allowedIps: ips });
    const { uuid } = await this.companies.findOneOrFail({ where: { id: companyId }, select: { uuid: true } });
    this.stateEvents.emit({ companyId, companyUuid: uuid, kind: 'allowed_ips' });
    return { ips };
  }

  /** Name and quota use of the companies with these ids, for reports. */
  namesAndQuota(ids: number[]): Promise<Array<Pick<Company, 'id' | 'uuid' | 'name' | 'quota' | 'used'>>> {
    if (!ids.length) return Promise.resolve([]);
    return this.companies.find({
      where: { id: In(ids) },
      select: { id: true, uuid: true, name: true, quota: true, used: true },
    });
  }

  /** The id of the company an admin names by uuid: 404 when there is none. */
  async idOf(companyUuid: string): Promise<number> {
    const company = await this.companies.findOne({ where: { uuid: companyUuid }, select: { id: true } });
    if (!company) throw new NotFoundError('Company not found');
    return company.id;
  }

  /** The companies with these ids (in no particular order). */
  byIds(ids: number[]): Promise<Company[]> {
    return ids.length ? this.companies.findBy({ id: In(ids) }) : Promise.resolve([]);
  }

  /** Remembers the CRM Account the company was synced to. */
  async setCrmAccountId(companyId: number, crmAccountId: string): Promise<void> {
    await this.companies.update({ id: companyId }, { crmAccountId });
  }

  private async find(companyId: number): Promise<Company> {
    const company = await this.companies.findOne({ where: { id: companyId } });
    if (!company) throw new NotFoundError('Company not found');
    return company;
  }
}
