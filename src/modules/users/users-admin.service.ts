import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Brackets, Repository } from 'typeorm';
import { ConflictError, NotFoundError } from '../../common/errors/domain-error';
import { Page, skipFor, toPage } from '../../common/pagination/page';
import { parseSort } from '../../common/pagination/sort';
import { containsPattern } from '../../common/search';
import { AdminUpdateUserDto, ListUsersQueryDto, USER_SORT_FIELDS } from './dto/user-admin-requests.dto';
import { AdminUserDto } from './dto/user-admin-response.dto';
import { User } from './entities/user.entity';
import { UsersService } from './users.service';

/** The admin side of users (`/api/v1/admins/users`). */
@Injectable()
export class UsersAdminService {
  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    private readonly usersService: UsersService,
  ) {}

  async list(q: ListUsersQueryDto): Promise<Page<AdminUserDto>> {
    const [column, direction] = parseSort(q.sort, USER_SORT_FIELDS, ['createdAt', 'DESC']);
    const qb = this.query();
    if (q.status) qb.andWhere('u.status = :status', { status: q.status });
    if (q.companyUuid) qb.andWhere('company.uuid = :companyUuid', { companyUuid: q.companyUuid });
    if (q.search) {
      const pattern = containsPattern(q.search);
      qb.andWhere(
        new Brackets((w) =>
          w
            .where("LOWER(u.email) LIKE :pattern ESCAPE '\\'", { pattern })
            .orWhere("LOWER(contact.full_name) LIKE :pattern ESCAPE '\\'", { pattern }),
        ),
      );
    }
    const [items, total] = await qb
      .orderBy(column, direction, 'NULLS LAST')
      .addOrderBy('u.id', direction)
      .skip(skipFor(q.page, q.limit))
      .take(q.limit)
      .getManyAndCount();
    return toPage(
      items.map((u) => AdminUserDto.fromUser(u)),
      total,
      q.page,
      q.limit,
    );
  }

  async get(uuid: string): Promise<AdminUserDto> {
    return AdminUserDto.fromUser(await this.find(uuid));
  }

  /**
   * `suspended` blocks login, refresh and the user's access tokens at once (the guards re-read
   * the user). `active` reactivates a suspended user; a user whose e-mail address was never
   * verified cannot be made active by an admin (409): verification (or the invitation) is the
   * only way from `pending`, so every active user has proven the address.
   */
  async update(uuid: string, dto: AdminUpdateUserDto): Promise<AdminUserDto> {
    const user = await this.find(uuid);
    if (dto.status !== undefined && dto.status !== user.status) {
      if (dto.status === 'active' && !user.emailVerifiedAt) {
        throw new ConflictError('The user has not verified the e-mail address yet');
      }
      await this.users.update({ id: user.id }, { status: dto.status });
    }
    return this.get(uuid);
  }

  /** Re-sends the verification e-mail (the invitation, for a member without a password); 409 when already verified. */
  async resendVerification(uuid: string): Promise<void> {
    const user = await this.query().addSelect('u.passwordHash').where('u.uuid = :uuid', { uuid }).getOne();
    if (!user) throw new NotFoundError('User not found');
    if (user.emailVerifiedAt) throw new ConflictError('The e-mail address is already verified');
    await this.usersService.sendVerificationOrInvitation(user);
  }

  private async find(uuid: string): Promise<User> {
    const user = await this.query().where('u.uuid = :uuid', { uuid }).getOne();
    if (!user) throw new NotFoundError('User not found');
    return user;
  }

  private query() {
    return this.users
      .createQueryBuilder('u')
      .innerJoinAndSelect('u.contact', 'contact')
      .innerJoinAndSelect('u.company', 'company');
  }
}
