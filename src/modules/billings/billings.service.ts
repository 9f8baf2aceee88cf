import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { In, IsNull, Repository } from 'typeorm';
import { NotFoundError } from '../../common/errors/domain-error';
import { Page, skipFor, toPage } from '../../common/pagination/page';
import { AppConfig } from '../../config/app-config';
import { SqlDialect } from '../../database/sql-dialect';
import { TransactionService } from '../../database/transaction.service';
import { CompanyStateService } from '../companies/company-state.service';
import { Notifier } from '../notifications/notifier';
import { PackagesService } from '../packages/packages.service';
import type { User } from '../users/entities/user.entity';
import { BILLING_NOT_FOUND, billingsWithRefs, lockBilling } from './billing-queries';
import { BillingStateError, canTransition, nextBillingStatus, OPEN_BILLING_STATUSES } from './billing-state';
import { CreateBillingDto, ListBillingsQueryDto } from './dto/billing-requests.dto';
import { BillingDto } from './dto/billing-response.dto';
import { Billing } from './entities/billing.entity';
import type { ProofUpload } from './proof-upload';

export interface StoredProof {
  content: Buffer;
  name: string;
  type: string;
}

/** The customer side of billing: buying a package, paying manually with a proof, cancelling. */
@Injectable()
export class BillingsService {
  constructor(
    @InjectRepository(Billing) private readonly billings: Repository<Billing>,
    private readonly packages: PackagesService,
    private readonly transactions: TransactionService,
    private readonly dialect: SqlDialect,
    private readonly companyState: CompanyStateService,
    private readonly notifications: Notifier,
    private readonly config: AppConfig,
  ) {}

  /** The company's billings, newest first. */
  async list(companyId: number, q: ListBillingsQueryDto): Promise<Page<BillingDto>> {
    const qb = billingsWithRefs(this.billings).where('billing.company_id = :companyId', { companyId });
    if (q.status) qb.andWhere('billing.status = :status', { status: q.status });
    const [rows, total] = await qb
      .orderBy('billing.createdAt', 'DESC')
      .addOrderBy('billing.id', 'DESC')
      .skip(skipFor(q.page, q.limit))
      .take(q.limit)
      .getManyAndCount();
    return toPage(
      rows.map((b) => BillingDto.from(b)),
      total,
      q.page,
      q.limit,
    );
  }

  async get(uuid: string): Promise<BillingDto> {
    return BillingDto.from(await this.load(uuid));
  }

  /** With its company and package references; 404 when there is none. */
  async load(uuid: string): Promise<Billing> {
    const billing = await billingsWithRefs(this.billings).where('billing.uuid = :uuid', { uuid }).getOne();
    if (!billing) throw new NotFoundError(BILLING_NOT_FOUND);
    return billing;
  }

  /**
   * A new billing for an active, public package, or the company's open one (pending or
   * awaiting review) for the same package. The company row is locked (PostgreSQL; SQLite runs
   * transactions one at a time) so concurrent requests cannot both create one. An open
   * billing whose payment window has passed is expired here and a new one is made.
   */
  async create(user: User, dto: CreateBillingDto): Promise<{ billing: BillingDto; created: boolean }> {
    const pkg = await this.packages.findOffered(dto.packageUuid);
    const { uuid, created } = await this.transactions.run(async (em) => {
      await this.companyState.lockRow(em, user.companyId);
      const open = await em.find(Billing, {
        where: { companyId: user.companyId, packageId: pkg.id, status: In([...OPEN_BILLING_STATUSES]) },
        order: { id: 'DESC' },
      });
      const now = new Date();
      for (const billing of open) {
        if (billing.status === 'pending' && billing.expiresAt <= now) {
          await em.update(
            Billing,
            { id: billing.id },
            { status: nextBillingStatus(billing.status, 'expire') },
          );
          continue;
        }
        return { uuid: billing.uuid, created: false };
      }
      const placeholder = `TMP-${randomBytes(12).toString('hex')}`;
      const inserted = await em.save(
        em.create(Billing, {
          number: placeholder,
          externalId: placeholder,
          companyId: user.companyId,
          packageId: pkg.id,
          packageName: pkg.name,
          packageQuota: pkg.quota,
          packageDurationDays: pkg.durationDays,
          amount: pkg.price,
          currency: pkg.currency,
          method: dto.method,
          status: 'pending',
          expiresAt: new Date(now.getTime() + this.config.env.PAYMENT_INVOICE_DURATION * 1000),
        }),
      );
      const number = invoiceNumber(inserted.createdAt ?? now, inserted.id);
      await em.update(Billing, { id: inserted.id }, { number, externalId: number });
      return { uuid: inserted.uuid, created: true };
    });
    return { billing: await this.get(uuid), created };
  }

  /** 409 before the upload is read when the billing cannot take a proof now. */
  async assertCanUploadProof(uuid: string): Promise<void> {
    const billing = await this.billings.findOne({ where: { uuid }, select: { id: true, status: true } });
    if (!billing) throw new NotFoundError(BILLING_NOT_FOUND);
    if (!canTransition(billing.status, 'upload_proof'))
      throw new BillingStateError(billing.status, 'upload_proof');
  }

  /** pending → awaiting_review with the proof stored; accounting admins are notified. */
  async uploadProof(uuid: string, proof: ProofUpload): Promise<BillingDto> {
    await this.transactions.run(async (em) => {
      const billing = await lockBilling(em, this.dialect, uuid);
      const status = nextBillingStatus(billing.status, 'upload_proof');
      await em.update(
        Billing,
        { id: billing.id },
        {
          status,
          proofContent: proof.content,
          proofFileName: proof.name,
          proofFileType: proof.type,
          proofFileSize: proof.size,
          proofUploadedAt: new Date(),
        },
      );
      await this.notifications.notifyAdmins(
        ['accounting'],
        {
          type: 'billing.proof_uploaded',
          title: `Payment proof uploaded for ${billing.number}`,
          body: `A payment proof for ${billing.packageName} (${billing.amount} ${billing.currency}) awaits review.`,
          data: { billingUuid: billing.uuid },
        },
        em,
      );
    });
    return this.get(uuid);
  }

  /** The stored proof, or 404 when the billing has none. */
  async proof(uuid: string): Promise<StoredProof> {
    const billing = await this.billings
      .createQueryBuilder('billing')
      .select(['billing.id', 'billing.proofFileName', 'billing.proofFileType'])
      .addSelect('billing.proofContent')
      .where('billing.uuid = :uuid', { uuid })
      .getOne();
    if (!billing) throw new NotFoundError(BILLING_NOT_FOUND);
    if (!billing.proofContent || !billing.proofFileType) {
      throw new NotFoundError('This billing has no payment proof');
    }
    return {
      content: Buffer.from(billing.proofContent),
      name: billing.proofFileName ?? 'proof',
      type: billing.proofFileType,
    };
  }

  /** A company's billing by uuid, or null: what the payment gateway reads before creating its invoice. */
  findOfCompany(companyId: number, uuid: string): Promise<Billing | null> {
    return this.billings.findOneBy({ uuid, companyId });
  }

  /** The billing as stored now (it must exist). */
  reload(billingId: number): Promise<Billing> {
    return this.billings.findOneByOrFail({ id: billingId });
  }

  /**
   * Stores the gateway invoice of a pending billing that has none yet, with a conditional
   * update: false when another caller stored one first or the billing stopped being pending.
   */
  async attachGatewayInvoice(
    billingId: number,
    invoice: Pick<Billing, 'gatewayInvoiceId' | 'paymentUrl' | 'gatewayExpiresAt' | 'expiresAt'>,
  ): Promise<boolean> {
    const result = await this.billings.update(
      { id: billingId, gatewayInvoiceId: IsNull(), status: 'pending' },
      invoice,
    );
    return result.affected === 1;
  }

  /** pending → cancelled (409 from any other status). */
  async cancel(uuid: string): Promise<BillingDto> {
    await this.transactions.run(async (em) => {
      const billing = await lockBilling(em, this.dialect, uuid);
      await em.update(Billing, { id: billing.id }, { status: nextBillingStatus(billing.status, 'cancel') });
    });
    return this.get(uuid);
  }
}

/** `INV/YYYY/MM/000123`: unique because the sequence part is the row id. */
export function invoiceNumber(createdAt: Date, id: number): string {
  const month = String(createdAt.getUTCMonth() + 1).padStart(2, '0');
  return `INV/${createdAt.getUTCFullYear()}/${month}/${String(id).padStart(6, '0')}`;
}
