import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { IsNull, Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { BadRequestError } from '../../common/errors/domain-error';
import { Page, skipFor, toPage } from '../../common/pagination/page';
import { parseSort } from '../../common/pagination/sort';
import { TransactionService } from '../../database/transaction.service';
import type { Admin } from '../admins/entities/admin.entity';
import { CompanyIdLookup } from '../companies/company-id-lookup';
import type { User } from '../users/entities/user.entity';
import { UserRecipientSource } from '../users/user-recipients';
import {
  BroadcastDto,
  ListNotificationsQueryDto,
  NOTIFICATION_SORT_FIELDS,
} from './dto/notification-requests.dto';
import {
  BroadcastResultDto,
  NotificationDto,
  ReadAllDto,
  UnreadCountDto,
} from './dto/notification-response.dto';
import { Notification } from './entities/notification.entity';
import { NotificationContent, Notifier } from './notifier';

/** Whose notifications a route reads: the calling user or the calling admin. */
export type NotificationOwner =
  (Pick<User, 'id' | 'uuid'> & { kind: 'user' }) | (Pick<Admin, 'id' | 'uuid'> & { kind: 'admin' });

export const userOwner = (user: Pick<User, 'id' | 'uuid'>): NotificationOwner => ({
  kind: 'user',
  id: user.id,
  uuid: user.uuid,
});

export const adminOwner = (admin: Pick<Admin, 'id' | 'uuid'>): NotificationOwner => ({
  kind: 'admin',
  id: admin.id,
  uuid: admin.uuid,
});

/** Rows written (and users read) per statement of a broadcast. */
const BROADCAST_BATCH = 500;

/**
 * The notifications of a user or an admin behind their routes: read, mark read, delete, and the
 * admins' broadcast. Raising a notification for an event is Notifier's.
 */
@Injectable()
export class NotificationInbox {
  constructor(
    @InjectRepository(Notification) private readonly notifications: Repository<Notification>,
    private readonly users: UserRecipientSource,
    private readonly companies: CompanyIdLookup,
    private readonly transactions: TransactionService,
    private readonly notifier: Notifier,
  ) {}

  /** How many notifications of a recipient are unread. */
  private unreadTotal(recipient: { userId: number } | { adminId: number }): Promise<number> {
    return this.notifications.count({
      where:
        'userId' in recipient
          ? { userId: recipient.userId, readAt: IsNull() }
          : { adminId: recipient.adminId, readAt: IsNull() },
    });
  }

  /** The owner's notifications, newest first unless `sort` says otherwise. */
  async list(owner: NotificationOwner, q: ListNotificationsQueryDto): Promise<Page<NotificationDto>> {
    const [column, direction] = parseSort(q.sort, NOTIFICATION_SORT_FIELDS, ['createdAt', 'DESC']);
    const qb = this.notifications
      .createQueryBuilder('notification')
      .where(`notification.${owner.kind}_id = :ownerId`, { ownerId: owner.id });
    if (q.unread !== undefined) {
      qb.andWhere(q.unread ? 'notification.read_at IS NULL' : 'notification.read_at IS NOT NULL');
    }
    if (q.type) qb.andWhere('notification.type = :type', { type: q.type });
    const [rows, total] = await qb
      .orderBy(column, direction)
      .addOrderBy('notification.id', direction)
      .skip(skipFor(q.page, q.limit))
      .take(q.limit)
      .getManyAndCount();
    return toPage(
      rows.map((n) => this.toDto(n, owner)),
      total,
      q.page,
      q.limit,
    );
  }

  /** The answer of the unread-count routes. */
  async unreadCount(owner: NotificationOwner): Promise<UnreadCountDto> {
    return { count: await this.unreadTotal(this.recipientOf(owner)) };
  }

  /**
   * Marks one of the owner's notifications read (once: a second call keeps the first time). The
   * ownership guard loaded it (another's is a 404 there).
   */
  async markRead(owner: NotificationOwner, notification: Pick<Notification, 'id'>): Promise<NotificationDto> {
    await this.notifications.update({ id: notification.id, readAt: IsNull() }, { readAt: new Date() });
    return this.toDto(await this.notifications.findOneByOrFail({ id: notification.id }), owner);
  }

  async markAllRead(owner: NotificationOwner): Promise<ReadAllDto> {
    const result = await this.notifications.update(
      { ...this.recipientOf(owner), readAt: IsNull() },
      { readAt: new Date() },
    );
    return { updated: result.affected ?? 0 };
  }

  /** Deletes one of the owner's notifications, loaded by the ownership guard (another's is a 404 there). */
  async remove(notification: Pick<Notification, 'id'>): Promise<void> {
    await this.notifications.delete({ id: notification.id });
  }

  /**
   * One `broadcast` notification per active user of the given companies (any status: the
   * admin named them), or of every active company when none are given. Rows are written in
   * batches inside one transaction, so a failure leaves nothing behind; e-mails follow after.
   */
  async broadcast(dto: BroadcastDto): Promise<BroadcastResultDto> {
    const companyIds = dto.companyUuids ? await this.companyIds(dto.companyUuids) : undefined;
    const content: NotificationContent = {
      type: 'broadcast',
      title: dto.title,
      body: dto.body,
      data: { broadcastUuid: randomUUID() },
      email: dto.email,
    };
    const emails: Array<{ email: string }> = [];
    const recipients = await this.transactions.run(async (em) => {
      let written = 0;
      for (let lastId = 0; ;) {
        const users = await this.users.activeBatch(
          { companyIds, afterId: lastId, limit: BROADCAST_BATCH },
          em,
        );
        if (!users.length) return written;
        await em
          .createQueryBuilder()
          .insert()
          .into(Notification)
          .values(users.map((u) => this.row(content, { userId: u.id })))
          .execute();
        written += users.length;
        if (content.email) emails.push(...users);
        lastId = users[users.length - 1].id;
      }
    });
    if (content.email) this.notifier.emailLater(emails, content);
    return { recipients };
  }

  /** Internal ids of the companies; unknown uuids are a 400 that names them. */
  private async companyIds(uuids: string[]): Promise<number[]> {
    const found = await this.companies.idsOf(uuids);
    const known = new Set(found.map((c) => c.uuid));
    const unknown = uuids.filter((u) => !known.has(u));
    if (unknown.length) throw new BadRequestError(`Unknown companies: ${unknown.join(', ')}`);
    return found.map((c) => c.id);
  }

  private row(
    content: NotificationContent,
    to: { userId?: number; adminId?: number },
  ): QueryDeepPartialEntity<Notification> {
    return {
      uuid: randomUUID(),
      userId: to.userId ?? null,
      adminId: to.adminId ?? null,
      type: content.type,
      title: content.title,
      body: content.body,
      // simple-json: TypeORM serialises the object; its deep-partial type does not describe that.
      data: (content.data ?? null) as QueryDeepPartialEntity<Notification>['data'],
      readAt: null,
    };
  }

  private recipientOf(owner: NotificationOwner): { userId: number } | { adminId: number } {
    return owner.kind === 'user' ? { userId: owner.id } : { adminId: owner.id };
  }

  private toDto(n: Notification, owner: NotificationOwner): NotificationDto {
    return NotificationDto.from(
      n,
      owner.kind === 'user' ? { userUuid: owner.uuid } : { adminUuid: owner.uuid },
    );
  }
}
