import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, LessThanOrEqual, MoreThan, Repository } from 'typeorm';
import { TransactionService } from '../../database/transaction.service';
import { Job } from '../jobs/job.decorator';
import { Notifier } from '../notifications/notifier';
import { BillingPaymentsService } from './billing-payments.service';
import { Billing } from './entities/billing.entity';

const HOUR = 3_600_000;
/** A pending billing is reminded once, when it has less than this left. */
export const REMINDER_WINDOW_MS = 24 * HOUR;
/** Billings read per query; a backlog is worked through in pages. */
const BATCH = 500;

/**
 * The billings area's scheduled jobs, both safe to run twice (and on two replicas at once):
 * - `expire-billings` (every minute): pending billings whose `expiresAt` has passed become
 *   `expired`, each through BillingPaymentsService.expire under its row lock;
 * - `billing-reminders` (hourly): pending billings expiring within 24 hours are claimed with a
 *   conditional update (`reminder_sent_at IS NULL`), and only the claimer notifies the
 *   company's users (`billing.expiring`, also e-mailed), in the same transaction as the claim.
 */
@Injectable()
export class BillingsJobs {
  constructor(
    private readonly payments: BillingPaymentsService,
    private readonly transactions: TransactionService,
    private readonly notifications: Notifier,
    @InjectRepository(Billing) private readonly billings: Repository<Billing>,
  ) {}

  /** Returns how many billings it expired. */
  @Job('expire-billings')
  async expireDue(now = new Date()): Promise<number> {
    let expired = 0;
    for (let lastId = 0; ;) {
      const due = await this.billings.find({
        where: { status: 'pending', expiresAt: LessThanOrEqual(now), id: MoreThan(lastId) },
        select: { id: true },
        order: { id: 'ASC' },
        take: BATCH,
      });
      if (!due.length) return expired;
      for (const billing of due) if (await this.payments.expire(billing.id)) expired += 1;
      lastId = due[due.length - 1].id;
    }
  }

  /** Returns how many billings it reminded of. */
  @Job('billing-reminders')
  async remindExpiring(now = new Date()): Promise<number> {
    const until = new Date(now.getTime() + REMINDER_WINDOW_MS);
    let reminded = 0;
    for (let lastId = 0; ;) {
      const expiring = await this.billings
        .createQueryBuilder('billing')
        .where("billing.status = 'pending'")
        .andWhere('billing.reminder_sent_at IS NULL')
        .andWhere('billing.expires_at > :now AND billing.expires_at <= :until', { now, until })
        .andWhere('billing.id > :lastId', { lastId })
        .orderBy('billing.id', 'ASC')
        .limit(BATCH)
        .getMany();
      if (!expiring.length) return reminded;
      for (const billing of expiring) if (await this.remind(billing, now)) reminded += 1;
      lastId = expiring[expiring.length - 1].id;
    }
  }

  private remind(billing: Billing, now: Date): Promise<boolean> {
    return this.transactions.run(async (em) => {
      const claim = await em.update(
        Billing,
        { id: billing.id, status: 'pending', reminderSentAt: IsNull() },
        { reminderSentAt: now },
      );
      if (!claim.affected) return false; // another run (or replica) claimed it, or it is no longer pending
      await this.notifications.notifyCompanyUsers(
        billing.companyId,
        {
          type: 'billing.expiring',
          title: `Invoice ${billing.number} expires soon`,
          body:
            `Your invoice ${billing.number} for the ${billing.packageName} package ` +
            `(${billing.amount} ${billing.currency}) expires at ${billing.expiresAt.toISOString()}. ` +
            'Pay it before then to keep your relay running.',
          data: { billingUuid: billing.uuid },
          email: true,
          link: `/billing/${billing.uuid}`,
        },
        em,
      );
      return true;
    });
  }
}
