import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, In, IsNull, Repository } from 'typeorm';
import { AdminRoleName } from '../admins/entities/admin-role.entity';
import { Admin } from '../admins/entities/admin.entity';
import { MailService } from '../mail/mail.service';
import { User } from '../users/entities/user.entity';
import { Notification, NotificationType } from './entities/notification.entity';

export interface NotificationContent {
  type: NotificationType;
  title: string;
  body: string;
  /** Small JSON with links to the resource, e.g. `{ billingUuid }`. */
  data?: Record<string, unknown>;
  /** Also e-mail it to each recipient (after the rows are written; a failed send is only logged). */
  email?: boolean;
  /** Front-end path for the e-mail's link. */
  link?: string;
}

interface Recipient {
  userId?: number;
  adminId?: number;
  email: string;
}

/**
 * Creates notifications for users and admins (one row per recipient) and e-mails the ones
 * worth it. Other areas call these methods when their events happen; pass the transaction's
 * EntityManager when the notification must stand or fall with the change that caused it.
 */
@Injectable()
export class NotificationsService {
  private readonly logger = new Logger(NotificationsService.name);

  constructor(
    @InjectRepository(Notification) private readonly notifications: Repository<Notification>,
    @InjectRepository(User) private readonly users: Repository<User>,
    @InjectRepository(Admin) private readonly admins: Repository<Admin>,
    private readonly mail: MailService,
  ) {}

  /** Every active user of the company. Returns how many were notified. */
  async notifyCompanyUsers(
    companyId: number,
    content: NotificationContent,
    em?: EntityManager,
  ): Promise<number> {
    const users = await (em?.getRepository(User) ?? this.users).find({
      where: { companyId, status: 'active' },
      select: { id: true, email: true },
    });
    return this.deliver(
      users.map((u) => ({ userId: u.id, email: u.email })),
      content,
      em,
    );
  }

  /** Every active admin whose role is one of `roles`. */
  async notifyAdmins(
    roles: readonly AdminRoleName[],
    content: NotificationContent,
    em?: EntityManager,
  ): Promise<number> {
    const admins = await (em?.getRepository(Admin) ?? this.admins)
      .createQueryBuilder('admin')
      .innerJoin('admin.role', 'role')
      .select(['admin.id', 'admin.email'])
      .where('admin.is_active = :active', { active: true })
      .andWhere('role.name IN (:...roles)', { roles: [...roles] })
      .getMany();
    return this.deliver(
      admins.map((a) => ({ adminId: a.id, email: a.email })),
      content,
      em,
    );
  }

  async notifyUsers(userIds: number[], content: NotificationContent, em?: EntityManager): Promise<number> {
    if (!userIds.length) return 0;
    const users = await (em?.getRepository(User) ?? this.users).find({
      where: { id: In(userIds) },
      select: { id: true, email: true },
    });
    return this.deliver(
      users.map((u) => ({ userId: u.id, email: u.email })),
      content,
      em,
    );
  }

  private async deliver(
    recipients: Recipient[],
    content: NotificationContent,
    em?: EntityManager,
  ): Promise<number> {
    if (!recipients.length) return 0;
    const repo = em?.getRepository(Notification) ?? this.notifications;
    const rows = recipients.map((r) =>
      repo.create({
        userId: r.userId ?? null,
        adminId: r.adminId ?? null,
        type: content.type,
        title: content.title,
        body: content.body,
        data: content.data ?? null,
        readAt: null,
      }),
    );
    for (let i = 0; i < rows.length; i += 200) await repo.save(rows.slice(i, i + 200));
    if (content.email) {
      // After the response: e-mail is work that can wait, and a failure must not undo the notification.
      setImmediate(() => {
        for (const r of recipients) {
          this.mail
            .sendNotification(r.email, content.title, content.body, content.link)
            .catch((e: unknown) => {
              this.logger.error({ err: e }, 'Notification e-mail failed');
            });
        }
      });
    }
    return rows.length;
  }

  /** Unread notifications of a recipient (used by the list routes). */
  unreadCount(recipient: { userId: number } | { adminId: number }): Promise<number> {
    return this.notifications.count({
      where:
        'userId' in recipient
          ? { userId: recipient.userId, readAt: IsNull() }
          : { adminId: recipient.adminId, readAt: IsNull() },
    });
  }
}
