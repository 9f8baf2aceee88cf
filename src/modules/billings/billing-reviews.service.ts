import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { NotFoundError } from '../../common/errors/domain-error';
import { Page, skipFor, toPage } from '../../common/pagination/page';
import { parseSort } from '../../common/pagination/sort';
import { AppConfig } from '../../config/app-config';
import { SqlDialect } from '../../database/sql-dialect';
import { TransactionService } from '../../database/transaction.service';
import type { Admin } from '../admins/entities/admin.entity';
import { Notifier } from '../notifications/notifier';
import { BillingPaymentsService } from './billing-payments.service';
import { BILLING_NOT_FOUND, billingsWithRefs, lockBilling } from './billing-queries';
import { nextBillingStatus } from './billing-state';
import {
  AdminListBillingsQueryDto,
  ApproveBillingDto,
  BILLING_SORT_FIELDS,
  RefundBillingDto,
  RejectBillingDto,
} from './dto/billing-requests.dto';
import { AdminBillingDto } from './dto/billing-response.dto';
import { toDateWindow } from '../../common/validation/date-filter';
import { Billing } from './entities/billing.entity';

/** The admin side of billing: lists across companies, approval, rejection, refund. */
@Injectable()
export class BillingReviewsService {
  constructor(
    @InjectRepository(Billing) private readonly billings: Repository<Billing>,
    private readonly payments: BillingPaymentsService,
    private readonly transactions: TransactionService,
    private readonly dialect: SqlDialect,
    private readonly notifications: Notifier,
    private readonly config: AppConfig,
  ) {}

  async list(q: AdminListBillingsQueryDto): Promise<Page<AdminBillingDto>> {
    const [column, direction] = parseSort(q.sort, BILLING_SORT_FIELDS, ['createdAt', 'DESC']);
    const window = toDateWindow(q.from, q.to);
    const qb = billingsWithRefs(this.billings);
    if (q.status) qb.andWhere('billing.status = :status', { status: q.status });
    if (q.method) qb.andWhere('billing.method = :method', { method: q.method });
    if (q.companyUuid) qb.andWhere('company.uuid = :companyUuid', { companyUuid: q.companyUuid });
    if (window.from) qb.andWhere('billing.created_at >= :from', { from: window.from });
    if (window.toExclusive) qb.andWhere('billing.created_at < :to', { to: window.toExclusive });
    const [rows, total] = await qb
      .orderBy(column, direction)
      .addOrderBy('billing.id', direction)
      .skip(skipFor(q.page, q.limit))
      .take(q.limit)
      .getManyAndCount();
    return toPage(
      rows.map((b) => AdminBillingDto.forAdmin(b)),
      total,
      q.page,
      q.limit,
    );
  }

  async get(uuid: string): Promise<AdminBillingDto> {
    const billing = await billingsWithRefs(this.billings).where('billing.uuid = :uuid', { uuid }).getOne();
    if (!billing) throw new NotFoundError(BILLING_NOT_FOUND);
    return AdminBillingDto.forAdmin(billing);
  }

  /**
   * pending or awaiting_review → paid, through the one payment path: the billing is marked
   * paid, the subscription period starts (or is extended) and the users are notified, in one
   * transaction. Any other status is a 409.
   */
  async approve(admin: Admin, uuid: string, dto: ApproveBillingDto): Promise<AdminBillingDto> {
    const billing = await this.billings.findOne({ where: { uuid }, select: { id: true } });
    if (!billing) throw new NotFoundError(BILLING_NOT_FOUND);
    await this.payments.markPaid(billing.id, {
      event: 'approve',
      paidAt: new Date(),
      paymentMethod: 'manual',
      reviewedByAdminUuid: admin.uuid,
      reviewNote: dto.note ?? null,
    });
    return this.get(uuid);
  }

  /**
   * awaiting_review → pending: the reason is stored, the rejected proof is cleared (the
   * customer uploads a new one), the payment window is re-opened for at least
   * PAYMENT_INVOICE_DURATION, and the company's users are notified and e-mailed.
   */
  async reject(admin: Admin, uuid: string, dto: RejectBillingDto): Promise<AdminBillingDto> {
    await this.transactions.run(async (em) => {
      const billing = await lockBilling(em, this.dialect, uuid);
      const status = nextBillingStatus(billing.status, 'reject');
      const reopenUntil = Date.now() + this.config.env.PAYMENT_INVOICE_DURATION * 1000;
      await em.update(
        Billing,
        { id: billing.id },
        {
          status,
          rejectedReason: dto.reason,
          reviewedByAdminUuid: admin.uuid,
          expiresAt: new Date(Math.max(billing.expiresAt.getTime(), reopenUntil)),
          proofContent: null,
          proofFileName: null,
          proofFileType: null,
          proofFileSize: null,
          proofUploadedAt: null,
        },
      );
      await this.notifications.notifyCompanyUsers(
        billing.companyId,
        {
          type: 'billing.rejected',
          title: `Payment proof rejected for ${billing.number}`,
          body: `Your payment proof for ${billing.packageName} was rejected: ${dto.reason}. Please upload a new proof.`,
          data: { billingUuid: billing.uuid },
          email: true,
          link: `/billing/${billing.uuid}`,
        },
        em,
      );
    });
    return this.get(uuid);
  }

  /** paid → refunded; the subscription is left as it is (an admin adjusts it on the company if needed). */
  async refund(uuid: string, dto: RefundBillingDto): Promise<AdminBillingDto> {
    await this.transactions.run(async (em) => {
      const billing = await lockBilling(em, this.dialect, uuid);
      await em.update(
        Billing,
        { id: billing.id },
        { status: nextBillingStatus(billing.status, 'refund'), refundReason: dto.reason },
      );
    });
    return this.get(uuid);
  }
}
