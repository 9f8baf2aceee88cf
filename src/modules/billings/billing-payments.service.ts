import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { NotFoundError } from '../../common/errors/domain-error';
import { SqlDialect } from '../../database/sql-dialect';
import { TransactionService } from '../../database/transaction.service';
import { CompanyStateService, PeriodChange } from '../companies/company-state.service';
import { Notifier } from '../notifications/notifier';
import { PackagesService } from '../packages/packages.service';
import { BillingEvent, canTransition, nextBillingStatus } from './billing-state';
import { Billing } from './entities/billing.entity';

export interface PaymentDetails {
  event: Extract<BillingEvent, 'gateway_paid' | 'approve'>;
  paidAt: Date;
  paidAmount?: number;
  paymentMethod?: string | null;
  paymentChannel?: string | null;
  reviewedByAdminUuid?: string;
  reviewNote?: string | null;
}

export type PaymentResult =
  | { outcome: 'applied'; billing: Billing; period: PeriodChange }
  | { outcome: 'not_applicable'; billing: Billing };

/**
 * Marking a billing paid and starting (or extending) the subscription period: one
 * transaction with the billing and company rows locked, so two concurrent `PAID` callbacks or
 * an approval racing a callback extend the period once. Used by the gateway callback and by
 * the admin approval.
 */
@Injectable()
export class BillingPaymentsService {
  constructor(
    private readonly transactions: TransactionService,
    private readonly dialect: SqlDialect,
    private readonly companyState: CompanyStateService,
    private readonly notifications: Notifier,
    private readonly packages: PackagesService,
  ) {}

  /** With `event: 'approve'` a billing that cannot be approved is a 409; a gateway payment that no longer applies is reported, not thrown. */
  async markPaid(billingId: number, details: PaymentDetails): Promise<PaymentResult> {
    return this.transactions.run(async (em) => {
      const billing = await this.lockBilling(em, billingId);
      if (details.event === 'gateway_paid' && !canTransition(billing.status, 'gateway_paid')) {
        return { outcome: 'not_applicable', billing };
      }
      billing.status = nextBillingStatus(billing.status, details.event);
      billing.paidAt = details.paidAt;
      billing.paidAmount = details.paidAmount ?? billing.amount;
      billing.paymentMethod = details.paymentMethod ?? billing.paymentMethod;
      billing.paymentChannel = details.paymentChannel ?? billing.paymentChannel;
      if (details.reviewedByAdminUuid) billing.reviewedByAdminUuid = details.reviewedByAdminUuid;
      if (details.reviewNote !== undefined) billing.reviewNote = details.reviewNote;
      await em.update(
        Billing,
        { id: billing.id },
        {
          status: billing.status,
          paidAt: billing.paidAt,
          paidAmount: billing.paidAmount,
          paymentMethod: billing.paymentMethod,
          paymentChannel: billing.paymentChannel,
          reviewedByAdminUuid: billing.reviewedByAdminUuid,
          reviewNote: billing.reviewNote,
        },
      );

      const packageUuid = await this.packages.uuidOf(billing.packageId, em);
      const { period } = await this.companyState.applyPayment(
        em,
        billing.companyId,
        { packageUuid, quota: billing.packageQuota, durationDays: billing.packageDurationDays },
        details.paidAt,
      );
      await this.notifications.notifyCompanyUsers(
        billing.companyId,
        {
          type: 'billing.paid',
          title: `Payment received for ${billing.number}`,
          body: `Your ${billing.packageName} package is ${period === 'started' ? 'active' : 'extended'}. Thank you!`,
          data: { billingUuid: billing.uuid },
          email: true,
          link: `/billing/${billing.uuid}`,
        },
        em,
      );
      return { outcome: 'applied', billing, period };
    });
  }

  /** Expires a pending billing (its `expiresAt` passed, or the gateway said EXPIRED). False when it is no longer pending. */
  async expire(billingId: number): Promise<boolean> {
    return this.transactions.run(async (em) => {
      const billing = await this.lockBilling(em, billingId);
      if (!canTransition(billing.status, 'expire')) return false;
      await em.update(Billing, { id: billing.id }, { status: nextBillingStatus(billing.status, 'expire') });
      return true;
    });
  }

  private async lockBilling(em: EntityManager, billingId: number): Promise<Billing> {
    const qb = em
      .getRepository(Billing)
      .createQueryBuilder('billing')
      .where('billing.id = :id', { id: billingId });
    const billing = await this.dialect.forUpdate(qb).getOne();
    if (!billing) throw new NotFoundError('Billing not found');
    return billing;
  }
}
