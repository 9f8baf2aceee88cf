import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { AdminRoleName } from '../admins/entities/admin-role.entity';

/** Who a notification goes to: an internal id and the e-mail address. */
export interface RecipientRow {
  id: number;
  email: string;
}

/** What the users area answers about its users (inside the caller's transaction when `em` is given). */
export interface UserRecipientSource {
  /** Active users of the company. */
  activeOfCompany(companyId: number, em?: EntityManager): Promise<RecipientRow[]>;
  /** Active owners of the company. */
  activeOwnersOfCompany(companyId: number, em?: EntityManager): Promise<RecipientRow[]>;
  /** The users with these ids, whatever their status. */
  withIds(ids: number[], em?: EntityManager): Promise<RecipientRow[]>;
  /**
   * Up to `limit` active users with an id above `afterId`, ascending: of the given companies,
   * or of every active company when `companyIds` is undefined.
   */
  activeBatch(
    batch: { companyIds?: number[]; afterId: number; limit: number },
    em?: EntityManager,
  ): Promise<RecipientRow[]>;
}

/** What the admins area answers about its admins. */
export interface AdminRecipientSource {
  /** Active admins whose role is one of `roles`. */
  activeWithRoles(roles: readonly AdminRoleName[], em?: EntityManager): Promise<RecipientRow[]>;
}

/** What the companies area answers about its companies: id and uuid of the known ones among `uuids`. */
export type CompanyIdLookup = (uuids: string[]) => Promise<Array<{ id: number; uuid: string }>>;

/**
 * Where the notifications find their recipients, registered by the users, admins and companies
 * areas when the application starts. Those areas raise notifications (this module is global), so
 * it cannot import them back without a cycle; it asks them through here instead of reading
 * their tables.
 */
@Injectable()
export class NotificationRecipients {
  private userSource?: UserRecipientSource;
  private adminSource?: AdminRecipientSource;
  private companyLookup?: CompanyIdLookup;

  setUsers(source: UserRecipientSource): void {
    this.userSource = source;
  }

  setAdmins(source: AdminRecipientSource): void {
    this.adminSource = source;
  }

  setCompanyLookup(lookup: CompanyIdLookup): void {
    this.companyLookup = lookup;
  }

  get users(): UserRecipientSource {
    if (!this.userSource) throw new Error('NotificationRecipients: the users area registered no source');
    return this.userSource;
  }

  get admins(): AdminRecipientSource {
    if (!this.adminSource) throw new Error('NotificationRecipients: the admins area registered no source');
    return this.adminSource;
  }

  companyIds(uuids: string[]): Promise<Array<{ id: number; uuid: string }>> {
    if (!this.companyLookup) {
      throw new Error('NotificationRecipients: the companies area registered no lookup');
    }
    return this.companyLookup(uuids);
  }
}
