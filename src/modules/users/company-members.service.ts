import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, In, Repository } from 'typeorm';
import { skipFor } from '../../common/pagination/page';
import { SqlDialect } from '../../database/sql-dialect';
import { Contact } from './entities/contact.entity';
import { User } from './entities/user.entity';

/**
 * The users of a company as rows of the users area: the companies area lists, invites and
 * removes members through here instead of registering the users and contacts tables. Methods
 * taking an EntityManager run inside the caller's transaction.
 */
@Injectable()
export class CompanyMembersService {
  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    private readonly dialect: SqlDialect,
  ) {}

  /** One page of the company's users with their contacts, oldest first (the founding owner leads). */
  page(companyId: number, page: { page: number; limit: number }): Promise<[User[], number]> {
    return this.oldestFirst(companyId)
      .skip(skipFor(page.page, page.limit))
      .take(page.limit)
      .getManyAndCount();
  }

  /** Every user of the company with its contact, oldest first. */
  all(companyId: number): Promise<User[]> {
    return this.oldestFirst(companyId).getMany();
  }

  /** The user with this e-mail (any company), with its contact and its password hash selected. */
  findByEmail(em: EntityManager, email: string): Promise<User | null> {
    return em
      .getRepository(User)
      .createQueryBuilder('member')
      .innerJoinAndSelect('member.contact', 'contact')
      .addSelect('member.passwordHash')
      .where('member.email = :email', { email })
      .getOne();
  }

  /** Ids of the company's active owners (who hear of its domains' checks). */
  async activeOwnerIds(companyId: number, em?: EntityManager): Promise<number[]> {
    const owners = await (em?.getRepository(User) ?? this.users).find({
      where: { companyId, companyRole: 'owner', status: 'active' },
      select: { id: true },
    });
    return owners.map((o) => o.id);
  }

  /** The first owner of each company (with the contact), keyed by company id. */
  async firstOwners(companyIds: number[]): Promise<Map<number, User>> {
    if (!companyIds.length) return new Map();
    const owners = await this.users.find({
      where: { companyId: In(companyIds), companyRole: 'owner' },
      relations: { contact: true },
      order: { id: 'ASC' },
    });
    const first = new Map<number, User>();
    for (const owner of owners) if (!first.has(owner.companyId)) first.set(owner.companyId, owner);
    return first;
  }

  /** Whether any user (of any company) has this e-mail address. */
  emailTaken(email: string): Promise<boolean> {
    return this.users.exists({ where: { email } });
  }

  /** The founding owner of a newly registered company: `pending` until the address is verified. */
  async createOwner(
    em: EntityManager,
    owner: { companyId: number; email: string; passwordHash: string; fullName: string; phone: string | null },
  ): Promise<User> {
    const contact = await em.save(
      em.create(Contact, { companyId: owner.companyId, fullName: owner.fullName, phone: owner.phone }),
    );
    const user = await em.save(
      em.create(User, {
        email: owner.email,
        passwordHash: owner.passwordHash,
        status: 'pending',
        companyRole: 'owner',
        companyId: owner.companyId,
        contactId: contact.id,
      }),
    );
    return Object.assign(user, { contact });
  }

  /** A `pending` member (role `member`, no password yet) with its contact. */
  async createPending(
    em: EntityManager,
    member: { companyId: number; email: string; fullName: string },
  ): Promise<User> {
    const contact = await em.save(
      em.create(Contact, { companyId: member.companyId, fullName: member.fullName }),
    );
    const user = await em.save(
      em.create(User, {
        email: member.email,
        passwordHash: null,
        passwordVersion: 0,
        status: 'pending',
        companyRole: 'member',
        companyId: member.companyId,
        contactId: contact.id,
      }),
    );
    return Object.assign(user, { contact });
  }

  /** Deletes the user row and its contact. */
  async delete(em: EntityManager, member: Pick<User, 'id' | 'contactId'>): Promise<void> {
    await em.delete(User, { id: member.id });
    await em.delete(Contact, { id: member.contactId });
  }

  /** Counts the company's owners, with their rows locked on PostgreSQL (SQLite runs transactions one at a time). */
  async lockOwners(em: EntityManager, companyId: number): Promise<number> {
    const qb = em
      .createQueryBuilder(User, 'owner')
      .select('owner.id')
      .where('owner.companyId = :companyId AND owner.companyRole = :role', { companyId, role: 'owner' });
    return (await this.dialect.forUpdate(qb).getMany()).length;
  }

  private oldestFirst(companyId: number) {
    return this.users
      .createQueryBuilder('member')
      .innerJoinAndSelect('member.contact', 'contact')
      .where('member.companyId = :companyId', { companyId })
      .orderBy('member.createdAt', 'ASC')
      .addOrderBy('member.id', 'ASC');
  }
}
