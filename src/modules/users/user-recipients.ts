import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, In, Repository } from 'typeorm';
import type { RecipientRow } from '../notifications/notifier';
import { User } from './entities/user.entity';

/**
 * Which users a notification goes to: what the notifications area asks (Notifier, the
 * broadcast). Each read runs inside the caller's transaction when `em` is given.
 */
@Injectable()
export class UserRecipientSource {
  constructor(@InjectRepository(User) private readonly users: Repository<User>) {}

  /** Active users of the company. */
  activeOfCompany(companyId: number, em?: EntityManager): Promise<RecipientRow[]> {
    return this.repo(em).find({
      where: { companyId, status: 'active' },
      select: { id: true, email: true },
    });
  }

  /** Active owners of the company. */
  activeOwnersOfCompany(companyId: number, em?: EntityManager): Promise<RecipientRow[]> {
    return this.repo(em).find({
      where: { companyId, status: 'active', companyRole: 'owner' },
      select: { id: true, email: true },
    });
  }

  /** The users with these ids, whatever their status. */
  withIds(ids: number[], em?: EntityManager): Promise<RecipientRow[]> {
    return this.repo(em).find({ where: { id: In(ids) }, select: { id: true, email: true } });
  }

  /**
   * Up to `limit` active users with an id above `afterId`, ascending: of the given companies, or
   * of every active company when `companyIds` is undefined (a broadcast reads them in batches).
   */
  activeBatch(
    batch: { companyIds?: number[]; afterId: number; limit: number },
    em?: EntityManager,
  ): Promise<RecipientRow[]> {
    const qb = this.repo(em)
      .createQueryBuilder('user')
      .select(['user.id', 'user.email'])
      .where("user.status = 'active'")
      .andWhere('user.id > :lastId', { lastId: batch.afterId });
    if (batch.companyIds)
      qb.andWhere('user.company_id IN (:...companyIds)', { companyIds: batch.companyIds });
    else qb.innerJoin('user.company', 'company').andWhere("company.status = 'active'");
    return qb.orderBy('user.id', 'ASC').limit(batch.limit).getMany();
  }

  private repo(em?: EntityManager): Repository<User> {
    return em?.getRepository(User) ?? this.users;
  }
}
