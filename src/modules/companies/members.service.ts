import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { ConflictError, NotFoundError } from '../../common/errors/domain-error';
import { Page, skipFor, toPage } from '../../common/pagination/page';
import { TransactionService } from '../../database/transaction.service';
import { Contact } from '../users/entities/contact.entity';
import { User } from '../users/entities/user.entity';
import { UsersService } from '../users/users.service';
import { InviteMemberDto, ListMembersQueryDto } from './dto/company-requests.dto';
import { MemberDto } from './dto/company-response.dto';
import { Company } from './entities/company.entity';

export interface Invitation {
  member: MemberDto;
  /** False when the e-mail was already invited to this company and the invitation was re-sent. */
  created: boolean;
}

/** The users of a company: list, invite (owners), remove (owners). */
@Injectable()
export class MembersService {
  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    private readonly transactions: TransactionService,
    private readonly usersService: UsersService,
  ) {}

  /** Oldest first, so the founding owner leads. */
  async list(company: Company, q: ListMembersQueryDto): Promise<Page<MemberDto>> {
    const [items, total] = await this.users
      .createQueryBuilder('member')
      .innerJoinAndSelect('member.contact', 'contact')
      .where('member.companyId = :companyId', { companyId: company.id })
      .orderBy('member.createdAt', 'ASC')
      .addOrderBy('member.id', 'ASC')
      .skip(skipFor(q.page, q.limit))
      .take(q.limit)
      .getManyAndCount();
    return toPage(
      items.map((u) => MemberDto.fromMember(u, company.uuid)),
      total,
      q.page,
      q.limit,
    );
  }

  /**
   * Creates a `pending` member (role `member`) with its contact and e-mails an invitation. The
   * same e-mail again, while that member of this company has not accepted yet, re-sends the
   * invitation (the earlier one stays valid). An e-mail that belongs to another company's user,
   * or to a member of this company who already accepted, is a 409.
   */
  async invite(company: Company, dto: InviteMemberDto): Promise<Invitation> {
    const result = await this.transactions.run(async (em) => {
      const existing = await em
        .getRepository(User)
        .createQueryBuilder('member')
        .innerJoinAndSelect('member.contact', 'contact')
        .addSelect('member.passwordHash')
        .where('member.email = :email', { email: dto.email })
        .getOne();
      if (existing) {
        if (existing.companyId !== company.id) {
          throw new ConflictError('This e-mail address belongs to a user of another company');
        }
        if (existing.status !== 'pending' || existing.passwordHash) {
          throw new ConflictError('This user is already a member of the company');
        }
        return { user: existing, created: false };
      }
      return { user: await this.createMember(em, company, dto), created: true };
    });
    await this.usersService.sendInvitationMail(result.user, result.user.contact.fullName, company.name);
    return { member: MemberDto.fromMember(result.user, company.uuid), created: result.created };
  }

  /**
   * Removes a user of the company: the user row and its contact are deleted, not deactivated.
   * Deleting frees the e-mail address (the person may later join another company, which a
   * deactivated row would block with a 409), and nothing needs the row afterwards: the
   * company's data belongs to the company, the user's notifications go with it (ON DELETE
   * CASCADE), and the access guard and refresh re-read the user, so its tokens stop working
   * at once (401). The last owner cannot be removed (409), so a company always has an owner.
   */
  async remove(company: Company, userUuid: string): Promise<void> {
    await this.transactions.run(async (em) => {
      const target = await em.findOne(User, { where: { uuid: userUuid, companyId: company.id } });
      if (!target) throw new NotFoundError('User not found');
      if (target.companyRole === 'owner') {
        const owners = await this.lockOwners(em, company.id);
        if (owners <= 1) throw new ConflictError('The last owner of the company cannot be removed');
      }
      await em.delete(User, { id: target.id });
      await em.delete(Contact, { id: target.contactId });
    });
  }

  private async createMember(em: EntityManager, company: Company, dto: InviteMemberDto): Promise<User> {
    const contact = await em.save(em.create(Contact, { companyId: company.id, fullName: dto.fullName }));
    const user = await em.save(
      em.create(User, {
        email: dto.email,
        passwordHash: null,
        passwordVersion: 0,
        status: 'pending',
        companyRole: 'member',
        companyId: company.id,
        contactId: contact.id,
      }),
    );
    return Object.assign(user, { contact });
  }

  /** Counts the company's owners, with their rows locked on PostgreSQL (SQLite runs transactions one at a time). */
  private async lockOwners(em: EntityManager, companyId: number): Promise<number> {
    const qb = em
      .createQueryBuilder(User, 'owner')
      .select('owner.id')
      .where('owner.companyId = :companyId AND owner.companyRole = :role', { companyId, role: 'owner' });
    if (this.transactions.isPostgres) qb.setLock('pessimistic_write');
    return (await qb.getMany()).length;
  }
}
