import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Brackets, EntityManager, Repository } from 'typeorm';
import { BadRequestError, ConflictError, NotFoundError } from '../../common/errors/domain-error';
import { Page, skipFor, toPage } from '../../common/pagination/page';
import { parseSort } from '../../common/pagination/sort';
import { SqlDialect } from '../../database/sql-dialect';
import { TransactionService } from '../../database/transaction.service';
import { PasswordService } from '../auth/password.service';
import {
  ADMIN_SORT_FIELDS,
  CreateAdminDto,
  ListAdminsQueryDto,
  UpdateAdminDto,
  UpdateAdminMeDto,
} from './dto/admin-requests.dto';
import { AdminDto, AdminRoleDto } from './dto/admin-response.dto';
import { AdminRole, AdminRoleName } from './entities/admin-role.entity';
import { Admin } from './entities/admin.entity';

@Injectable()
export class AdminsService {
  constructor(
    @InjectRepository(Admin) private readonly admins: Repository<Admin>,
    @InjectRepository(AdminRole) private readonly roles: Repository<AdminRole>,
    private readonly transactions: TransactionService,
    private readonly dialect: SqlDialect,
    private readonly passwords: PasswordService,
  ) {}

  async updateMe(admin: Admin, dto: UpdateAdminMeDto): Promise<AdminDto> {
    if (dto.fullName !== undefined) {
      await this.admins.update({ id: admin.id }, { fullName: dto.fullName });
      admin.fullName = dto.fullName;
    }
    return AdminDto.from(admin);
  }

  async list(q: ListAdminsQueryDto): Promise<Page<AdminDto>> {
    const [column, direction] = parseSort(q.sort, ADMIN_SORT_FIELDS, ['createdAt', 'DESC']);
    const qb = this.query();
    if (q.roleName) qb.andWhere('role.name = :roleName', { roleName: q.roleName });
    if (q.isActive !== undefined) qb.andWhere('admin.is_active = :isActive', { isActive: q.isActive });
    if (q.search) {
      const pattern = `%${escapeLike(q.search.toLowerCase())}%`;
      qb.andWhere(
        new Brackets((w) =>
          w
            .where("LOWER(admin.email) LIKE :pattern ESCAPE '\\'", { pattern })
            .orWhere("LOWER(admin.full_name) LIKE :pattern ESCAPE '\\'", { pattern }),
        ),
      );
    }
    const [items, total] = await qb
      .orderBy(column, direction)
      .addOrderBy('admin.id', direction)
      .skip(skipFor(q.page, q.limit))
      .take(q.limit)
      .getManyAndCount();
    return toPage(
      items.map((a) => AdminDto.from(a)),
      total,
      q.page,
      q.limit,
    );
  }

  async get(uuid: string): Promise<AdminDto> {
    return AdminDto.from(await this.find(uuid));
  }

  async listRoles(): Promise<{ items: AdminRoleDto[] }> {
    const roles = await this.roles.find({ order: { id: 'ASC' } });
    return { items: roles.map((r) => AdminRoleDto.from(r)) };
  }

  async create(dto: CreateAdminDto): Promise<AdminDto> {
    if (await this.admins.exists({ where: { email: dto.email } }))
      throw new ConflictError('Email is already used by an admin');
    const role = await this.role(dto.roleName);
    const admin = await this.admins.save(
      this.admins.create({
        email: dto.email,
        fullName: dto.fullName,
        passwordHash: await this.passwords.hash(dto.password),
        roleId: role.id,
        isActive: true,
      }),
    );
    admin.role = role;
    return AdminDto.from(admin);
  }

  /**
   * An admin cannot deactivate or demote itself, and the last active superAdmin cannot be
   * deactivated or demoted. The count and the change happen in one transaction, with the
   * superAdmin rows locked on PostgreSQL, so two concurrent demotions cannot both pass.
   */
  async update(actor: Admin, uuid: string, dto: UpdateAdminDto): Promise<AdminDto> {
    const newRole = dto.roleName ? await this.role(dto.roleName) : undefined;
    const id = await this.transactions.run(async (em) => {
      const target = await em.findOne(Admin, { where: { uuid } });
      if (!target) throw new NotFoundError('Admin not found');
      const loses =
        (dto.isActive === false && target.isActive) ||
        (newRole !== undefined && newRole.id !== target.roleId);
      if (loses && target.id === actor.id)
        throw new ConflictError('You cannot deactivate or demote yourself');
      const losesSuperAdmin =
        target.isActive &&
        target.role.name === 'superAdmin' &&
        (dto.isActive === false || (newRole && newRole.name !== 'superAdmin'));
      if (losesSuperAdmin && (await this.countActiveSuperAdmins(em)) <= 1) {
        throw new ConflictError('The last active superAdmin cannot be deactivated or demoted');
      }
      const changes: Partial<Admin> = {};
      if (dto.fullName !== undefined) changes.fullName = dto.fullName;
      if (dto.isActive !== undefined) changes.isActive = dto.isActive;
      if (newRole) changes.roleId = newRole.id;
      if (Object.keys(changes).length) await em.update(Admin, { id: target.id }, changes);
      return target.uuid;
    });
    return this.get(id);
  }

  /** Creates the first superAdmin from ADMIN_EMAIL / ADMIN_PASSWORD when no admin exists at all. */
  async ensureFirstSuperAdmin(email: string, password: string): Promise<boolean> {
    if ((await this.admins.count()) > 0) return false;
    try {
      await this.create({
        email: email.trim().toLowerCase(),
        fullName: 'Administrator',
        password,
        roleName: 'superAdmin',
      });
      return true;
    } catch (e) {
      if ((await this.admins.count()) > 0) return false; // another replica created it first
      throw e;
    }
  }

  private async countActiveSuperAdmins(em: EntityManager): Promise<number> {
    const qb = em
      .createQueryBuilder(Admin, 'admin')
      .innerJoin('admin.role', 'role')
      .select('admin.id')
      .where('admin.is_active = :active AND role.name = :name', { active: true, name: 'superAdmin' });
    return (await this.dialect.forUpdate(qb, 'admin').getMany()).length;
  }

  private async find(uuid: string): Promise<Admin> {
    const admin = await this.query().where('admin.uuid = :uuid', { uuid }).getOne();
    if (!admin) throw new NotFoundError('Admin not found');
    return admin;
  }

  private async role(name: AdminRoleName): Promise<AdminRole> {
    const role = await this.roles.findOne({ where: { name } });
    if (!role) throw new BadRequestError(`Unknown role ${name}`);
    return role;
  }

  private query() {
    return this.admins.createQueryBuilder('admin').innerJoinAndSelect('admin.role', 'role');
  }
}

const escapeLike = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);
