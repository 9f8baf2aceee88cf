import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import type { RecipientRow } from '../notifications/notifier';
import type { AdminRoleName } from './entities/admin-role.entity';
import { Admin } from './entities/admin.entity';

/** Which admins a notification goes to: what the notifications area asks (Notifier). */
@Injectable()
export class AdminRecipientSource {
  constructor(@InjectRepository(Admin) private readonly admins: Repository<Admin>) {}

  /** Active admins whose role is one of `roles`, inside the caller's transaction when `em` is given. */
  activeWithRoles(roles: readonly AdminRoleName[], em?: EntityManager): Promise<RecipientRow[]> {
    return (em?.getRepository(Admin) ?? this.admins)
      .createQueryBuilder('admin')
      .innerJoin('admin.role', 'role')
      .select(['admin.id', 'admin.email'])
      .where('admin.is_active = :active', { active: true })
      .andWhere('role.name IN (:...roles)', { roles: [...roles] })
      .getMany();
  }
}
