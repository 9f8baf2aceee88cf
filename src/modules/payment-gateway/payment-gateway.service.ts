import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Repository } from 'typeorm';
import { ConflictError, NotFoundError } from '../../common/errors/domain-error';
import { AppConfig } from '../../config/app-config';
import { Billing } from '../billings/entities/billing.entity';
import type { User } from '../users/entities/user.entity';
import { PaymentInvoiceDto } from './dto/payment-invoice-response.dto';
import { PaymentGatewayClient } from './payment-gateway.client';

/**
 * The gateway invoice of a `pending` gateway billing, created once: later calls return the
 * stored one. Concurrent calls for one billing share one gateway request in this process, and
 * the invoice is stored with a conditional update (`gateway_invoice_id IS NULL AND status =
 * 'pending'`), so whatever races across replicas, every caller gets the one stored invoice.
 */
@Injectable()
export class PaymentGatewayService {
  private readonly logger = new Logger(PaymentGatewayService.name);
  /** Calls in flight per billing in this process: a concurrent call joins the first instead of reading a stale row. */
  private readonly inFlight = new Map<string, Promise<PaymentInvoiceDto>>();

  constructor(
    @InjectRepository(Billing) private readonly billings: Repository<Billing>,
    private readonly client: PaymentGatewayClient,
    private readonly config: AppConfig,
  ) {}

  invoiceFor(user: User, billingUuid: string): Promise<PaymentInvoiceDto> {
    const key = `${user.companyId}:${billingUuid}`;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.loadOrCreate(user, billingUuid).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private async loadOrCreate(user: User, billingUuid: string): Promise<PaymentInvoiceDto> {
    const billing = await this.billings.findOneBy({ uuid: billingUuid, companyId: user.companyId });
    if (!billing) throw new NotFoundError('Billing not found');
    assertPayable(billing);
    return storedInvoice(billing) ?? this.create(billing, user.email);
  }

  private async create(billing: Billing, payerEmail: string): Promise<PaymentInvoiceDto> {
    // The invoice never outlives the billing: a payment after the billing expired could not be applied.
    const secondsLeft = Math.floor((billing.expiresAt.getTime() - Date.now()) / 1000);
    if (secondsLeft < 1) throw new ConflictError('Cannot pay a billing that has expired');
    const invoiceDuration = Math.min(this.config.env.PAYMENT_INVOICE_DURATION, secondsLeft);

    const invoice = await this.client.createInvoice({
      externalId: billing.externalId,
      amount: billing.amount,
      currency: billing.currency,
      payerEmail,
      description: `${billing.packageName} package, invoice ${billing.number}`,
      invoiceDuration,
    });
    const expiresAt = invoice.expiresAt ?? new Date(Date.now() + invoiceDuration * 1000);

    const result = await this.billings.update(
      { id: billing.id, gatewayInvoiceId: IsNull(), status: 'pending' },
      { gatewayInvoiceId: invoice.id, paymentUrl: invoice.invoiceUrl, gatewayExpiresAt: expiresAt },
    );
    if (result.affected === 1) {
      return { paymentUrl: invoice.invoiceUrl, gatewayInvoiceId: invoice.id, expiresAt };
    }

    // Another replica stored its invoice first, or the billing stopped being pending meanwhile.
    const current = await this.billings.findOneByOrFail({ id: billing.id });
    this.logger.warn(
      { billingUuid: billing.uuid, unusedInvoiceId: invoice.id },
      'Gateway invoice not stored: the billing changed while it was being created',
    );
    const stored = storedInvoice(current);
    if (stored && current.status === 'pending') return stored;
    assertPayable(current);
    throw new ConflictError('The billing changed while its invoice was being created; try again');
  }
}

function assertPayable(billing: Billing): void {
  if (billing.method !== 'gateway') {
    throw new ConflictError('This billing is paid by manual transfer, not through the payment gateway');
  }
  if (billing.status !== 'pending') {
    throw new ConflictError(`Cannot pay a billing that is ${billing.status.replace('_', ' ')}`);
  }
}

function storedInvoice(billing: Billing): PaymentInvoiceDto | null {
  if (!billing.gatewayInvoiceId || !billing.paymentUrl) return null;
  return {
    paymentUrl: billing.paymentUrl,
    gatewayInvoiceId: billing.gatewayInvoiceId,
    expiresAt: billing.gatewayExpiresAt ?? billing.expiresAt,
  };
}
