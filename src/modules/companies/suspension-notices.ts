import type { EntityManager } from 'typeorm';
import type { Notifier } from '../notifications/notifier';
import type { Company } from './entities/company.entity';

export interface SuspensionNotice {
  /** For the company's users (also e-mailed). */
  usersBody: string;
  /** For every admin and superAdmin admin. */
  adminsTitle: string;
  adminsBody: string;
  /** Extra fields of the admins' notification data, beside `companyUuid` and `reason`. */
  adminsData?: Record<string, unknown>;
}

/**
 * Who hears of a suspension, whatever suspended the company (an admin, the spam threshold):
 * its users, by notification and e-mail, and every admin and superAdmin admin. The rows are
 * written in the caller's transaction (`em`, from TransactionService.run); the e-mails leave
 * only after it commits and not at all if it rolls back.
 */
export async function announceSuspension(
  notifications: Notifier,
  em: EntityManager,
  company: Company,
  notice: SuspensionNotice,
): Promise<void> {
  const data = { companyUuid: company.uuid, reason: company.suspendedReason };
  await notifications.notifyCompanyUsers(
    company.id,
    {
      type: 'company.suspended',
      title: 'Your company has been suspended',
      body: notice.usersBody,
      data,
      email: true,
      link: '/company',
    },
    em,
  );
  await notifications.notifyAdmins(
    ['superAdmin', 'admin'],
    {
      type: 'company.suspended',
      title: notice.adminsTitle,
      body: notice.adminsBody,
      data: { ...data, ...notice.adminsData },
    },
    em,
  );
}
