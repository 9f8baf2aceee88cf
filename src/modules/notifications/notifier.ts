import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { EntityManager, Repository } from 'typeorm';
import { chunks } from '../../database/chunks';
import { TransactionService } from '../../database/transaction.service';
import { AdminRecipientSource } from '../admins/admin-recipients';
import type { AdminRoleName } from '../admins/entities/admin-role.entity';
import { MailService } from '../mail/mail.service';
import { UserRecipientSource } from '../users/user-recipients';
import { Notification, NotificationType } from './entities/notification.entity';

export interface NotificationContent {
  type: NotificationType;
  title: string;
  body: string;
  /** Small JSON with links to the resource, e.g. `{ billingUuid }`. */
  data?: Record<string, unknown>;
  /**
   * Also e-mail it to each recipient: once the rows are committed (after the caller's
   * transaction when `em` is one, never if it rolls back); a failed send is only logged.
   */
  email?: boolean;
  /** Front-end path for the e-mail's link. */
  link?: string;
}

/** Who a notification goes to: an internal id (a user's or an admin's) and the e-mail address. */
export interface RecipientRow {
  id: number;
  email: string;
}

interface Recipient {
  userId?: number;
  adminId?: number;
  email: string;
}

/** E-mails sent at the same time by one delivery: a broadcast must not open thousands of SMTP connections. */
const EMAIL_CONCURRENCY = 5;

/**
 * Creates notifications for users and admins (one row per recipient) and e-mails the ones
 * worth it: what other areas call when their events happen. Pass the transaction's
 * EntityManager (of TransactionService.run) when the notification must stand or fall with the
 * change that caused it: its e-mails then leave only once that transaction has committed.
 */
@Injectable()
export class Notifier {
  private readonly logger = new Logger(Notifier.name);

  constructor(
    @InjectRepository(Notification) private readonly notifications: Repository<Notification>,
    private readonly users: UserRecipientSource,
    private readonly admins: AdminRecipientSource,
    private readonly transactions: TransactionService,
    private readonly mail: MailService,
  ) {}

  /** Every active user of the company. Returns how many were notified. */
  async notifyCompanyUsers(
    companyId: number,
    content: NotificationContent,
    em?: EntityManager,
  ): Promise<number> {
    const users = await this.users.activeOfCompany(companyId, em);
    return this.deliver(
      users.map((u) => ({ userId: u.id, email: u.email })),
      content,
      em,
    );
  }

  /** Every active owner of the company. Returns how many were notified. */
  async notifyCompanyOwners(
    companyId: number,
    content: NotificationContent,
    em?: EntityManager,
  ): Promise<number> {
    const owners = await this.users.activeOwnersOfCompany(companyId, em);
    return this.deliver(
      owners.map((u) => ({ userId: u.id, email: u.email })),
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
    const admins = await this.admins.activeWithRoles(roles, em);
    return this.deliver(
      admins.map((a) => ({ adminId: a.id, email: a.email })),
      content,
      em,
    );
  }

  async notifyUsers(userIds: number[], content: NotificationContent, em?: EntityManager): Promise<number> {
    if (!userIds.length) return 0;
    const users = await this.users.withIds(userIds, em);
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
    for (const chunk of chunks(rows)) await repo.save(chunk);
    // Inside a transaction the e-mails wait for its commit, and a rollback cancels them.
    if (content.email) this.transactions.afterCommit(em, () => this.emailLater(recipients, content));
    return rows.length;
  }

  /**
   * After the response (detached: TransactionService.settled() waits for it): e-mail is work
   * that can wait, and a failure must not undo the notification (it is only logged). At most
   * EMAIL_CONCURRENCY sends run at once.
   */
  emailLater(recipients: Array<{ email: string }>, content: NotificationContent): void {
    const queue = recipients.map((r) => r.email);
    const worker = async (): Promise<void> => {
      for (let to = queue.shift(); to !== undefined; to = queue.shift()) {
        try {
          await this.mail.sendNotification(to, content.title, content.body, content.link);
        } catch (e: unknown) {
          this.logger.error({ err: e }, 'Notification e-mail failed');
        }
      }
    };
    this.transactions.detach(async () => {
      await nextTurn();
      await Promise.all(Array.from({ length: Math.min(EMAIL_CONCURRENCY, queue.length) }, worker));
    });
  }
}
