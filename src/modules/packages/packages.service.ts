import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, In, QueryFailedError, Repository } from 'typeorm';
import { ConflictError, NotFoundError } from '../../common/errors/domain-error';
import { BillingPackageUsage } from '../billings/billing-records';
import { CompanyPackageUsage } from '../companies/company-package-usage';
import { Page, skipFor, toPage } from '../../common/pagination/page';
import { parseSort } from '../../common/pagination/sort';
import {
  CreatePackageDto,
  DEFAULT_DURATION_DAYS,
  ListPackagesQueryDto,
  PACKAGE_SORT_FIELDS,
  UpdatePackageDto,
} from './dto/package-requests.dto';
import { AdminPackageDto, PackageDeletedDto, PackageDto } from './dto/package-response.dto';
import { Package } from './entities/package.entity';
import { containsPattern } from '../../common/search';

const NOT_FOUND = 'Package not found';
const NAME_TAKEN = 'A package with this name already exists';

@Injectable()
export class PackagesService {
  constructor(
    @InjectRepository(Package) private readonly packages: Repository<Package>,
    private readonly companyUsage: CompanyPackageUsage,
    private readonly billingUsage: BillingPackageUsage,
  ) {}

  /** What customers may buy: active and public, cheapest first. */
  async listOffered(page: number, limit: number): Promise<Page<PackageDto>> {
    const [rows, total] = await this.packages.findAndCount({
      where: { isActive: true, isPublic: true },
      order: { price: 'ASC', name: 'ASC', id: 'ASC' },
      skip: skipFor(page, limit),
      take: limit,
    });
    return toPage(
      rows.map((p) => PackageDto.from(p)),
      total,
      page,
      limit,
    );
  }

  /** A package a customer may buy now (active and public); any other is "not found". */
  async findOffered(uuid: string): Promise<Package> {
    const pkg = await this.packages.findOne({ where: { uuid, isActive: true, isPublic: true } });
    if (!pkg) throw new NotFoundError(NOT_FOUND);
    return pkg;
  }

  async list(q: ListPackagesQueryDto): Promise<Page<AdminPackageDto>> {
    const [column, direction] = parseSort(q.sort, PACKAGE_SORT_FIELDS, ['createdAt', 'DESC']);
    const qb = this.packages.createQueryBuilder('package');
    if (q.isActive !== undefined) qb.andWhere('package.is_active = :isActive', { isActive: q.isActive });
    if (q.isPublic !== undefined) qb.andWhere('package.is_public = :isPublic', { isPublic: q.isPublic });
    if (q.search) {
      qb.andWhere("LOWER(package.name) LIKE :pattern ESCAPE '\\'", { pattern: containsPattern(q.search) });
    }
    const [rows, total] = await qb
      .orderBy(column, direction)
      .addOrderBy('package.id', direction)
      .skip(skipFor(q.page, q.limit))
      .take(q.limit)
      .getManyAndCount();
    const counts = await this.companyUsage.companiesPerPackage(rows.map((p) => p.uuid));
    return toPage(
      rows.map((p) => AdminPackageDto.withCount(p, counts.get(p.uuid) ?? 0)),
      total,
      q.page,
      q.limit,
    );
  }

  async get(uuid: string): Promise<AdminPackageDto> {
    const pkg = await this.find(uuid);
    const counts = await this.companyUsage.companiesPerPackage([pkg.uuid]);
    return AdminPackageDto.withCount(pkg, counts.get(pkg.uuid) ?? 0);
  }

  async create(dto: CreatePackageDto): Promise<AdminPackageDto> {
    await this.assertNameFree(dto.name);
    const saved = await this.save(
      this.packages.create({
        name: dto.name,
        description: dto.description ?? null,
        quota: dto.quota,
        price: dto.price,
        currency: dto.currency,
        durationDays: dto.durationDays ?? DEFAULT_DURATION_DAYS,
        isPublic: dto.isPublic ?? true,
        isActive: dto.isActive ?? true,
      }),
    );
    return AdminPackageDto.withCount(saved, 0);
  }

  /** Billings keep the snapshot taken at their creation: a new price applies to new billings only. */
  async update(uuid: string, dto: UpdatePackageDto): Promise<AdminPackageDto> {
    const pkg = await this.find(uuid);
    if (dto.name !== undefined && dto.name.toLowerCase() !== pkg.name.toLowerCase()) {
      await this.assertNameFree(dto.name, pkg.id);
    }
    const changes: Partial<Package> = {};
    if (dto.name !== undefined) changes.name = dto.name;
    if (dto.description !== undefined) changes.description = dto.description;
    if (dto.quota !== undefined) changes.quota = dto.quota;
    if (dto.price !== undefined) changes.price = dto.price;
    if (dto.currency !== undefined) changes.currency = dto.currency;
    if (dto.durationDays !== undefined) changes.durationDays = dto.durationDays;
    if (dto.isPublic !== undefined) changes.isPublic = dto.isPublic;
    if (dto.isActive !== undefined) changes.isActive = dto.isActive;
    if (Object.keys(changes).length) await this.save(this.packages.merge(pkg, changes));
    return this.get(uuid);
  }

  /**
   * A package used by any company or billing is archived (isActive = false), never deleted.
   * A billing created between the check and the delete makes the delete fail on its foreign
   * key: the package is then archived as well.
   */
  async remove(uuid: string): Promise<PackageDeletedDto> {
    const pkg = await this.find(uuid);
    if (!(await this.inUse(pkg))) {
      try {
        await this.packages.delete({ id: pkg.id });
        return { deleted: true, archived: false };
      } catch (e) {
        if (!(e instanceof QueryFailedError)) throw e;
      }
    }
    await this.packages.update({ id: pkg.id }, { isActive: false });
    return { deleted: false, archived: true };
  }

  /** A package by uuid, whatever its state, or null; read in the caller's transaction when given one. */
  findByUuid(uuid: string, em?: EntityManager): Promise<Package | null> {
    return (em?.getRepository(Package) ?? this.packages).findOne({ where: { uuid } });
  }

  /** The names of the packages with these uuids, in one query. */
  async namesOf(uuids: string[]): Promise<Map<string, string>> {
    if (!uuids.length) return new Map();
    const found = await this.packages.find({
      where: { uuid: In(uuids) },
      select: { uuid: true, name: true },
    });
    return new Map(found.map((p) => [p.uuid, p.name]));
  }

  /** The uuid of a package by id, read in the caller's transaction when given one. */
  async uuidOf(packageId: number, em?: EntityManager): Promise<string> {
    const pkg = await (em?.getRepository(Package) ?? this.packages).findOneOrFail({
      where: { id: packageId },
      select: { id: true, uuid: true },
    });
    return pkg.uuid;
  }

  /** True when a company has the package or a billing refers to it. */
  private async inUse(pkg: Package): Promise<boolean> {
    return (await this.companyUsage.uses(pkg)) || (await this.billingUsage.uses(pkg));
  }

  private async assertNameFree(name: string, exceptId?: number): Promise<void> {
    const qb = this.packages
      .createQueryBuilder('package')
      .where('LOWER(package.name) = :name', { name: name.toLowerCase() });
    if (exceptId !== undefined) qb.andWhere('package.id <> :exceptId', { exceptId });
    if (await qb.getExists()) throw new ConflictError(NAME_TAKEN);
  }

  /** A concurrent create with the same name hits the unique index: the same 409. */
  private async save(pkg: Package): Promise<Package> {
    try {
      return await this.packages.save(pkg);
    } catch (e) {
      if (e instanceof QueryFailedError && /unique|duplicate/i.test(e.message))
        throw new ConflictError(NAME_TAKEN);
      throw e;
    }
  }

  private async find(uuid: string): Promise<Package> {
    const pkg = await this.packages.findOne({ where: { uuid } });
    if (!pkg) throw new NotFoundError(NOT_FOUND);
    return pkg;
  }
}
