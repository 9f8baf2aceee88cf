import { Injectable, Logger } from '@nestjs/common';
import { ConflictError, NotFoundError } from '../../common/errors/domain-error';
import { AppConfig } from '../../config/app-config';
import { assertGatewayPayable, isGatewayPayable } from '../billings/billing-state';
import { BillingsService } from '../billings/billings.service';
import type { Billing } from '../billings/entities/billing.entity';
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
    private readonly billings: BillingsService,
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
    const billing = await this.billings.findOfCompany(user.companyId, billingUuid);
    if (!billing) throw new NotFoundError('Billing not found');
    assertGatewayPayable(billing);
    return storedInvoice(billing) ?? this.create(billing, user.email);
  }

  private async create(billing: Billing, payerEmail: string): Promise<PaymentInvoiceDto> {
    if (billing.expiresAt.getTime() <= Date.now()) {
      throw new ConflictError('Cannot pay a billing that has expired');
    }
    // integrations.md: the invoice lasts PAYMENT_INVOICE_DURATION, exactly.
    const invoiceDuration = this.config.env.PAYMENT_INVOICE_DURATION;

    const invoice = await this.client.createInvoice({
      externalId: billing.externalId,
      amount: billing.amount,
      currency: billing.currency,
      payerEmail,
      description: `${billing.packageName} package, invoice ${billing.number}`,
      invoiceDuration,
    });
    const expiresAt = invoice.expiresAt ?? new Date(Date.now() + invoiceDuration * 1000);

    // The invoice never outlives the billing: a payment made through it must still be applicable,
    // so a billing due earlier stays payable until its invoice expires.
    const stored = await this.billings.attachGatewayInvoice(billing.id, {
      gatewayInvoiceId: invoice.id,
      paymentUrl: invoice.invoiceUrl,
      gatewayExpiresAt: expiresAt,
      expiresAt: new Date(Math.max(billing.expiresAt.getTime(), expiresAt.getTime())),
    });
    if (stored) {
      return { paymentUrl: invoice.invoiceUrl, gatewayInvoiceId: invoice.id, expiresAt };
    }

    // Another replica stored its invoice first, or the billing stopped being pending meanwhile.
    const current = await this.billings.reload(billing.id);
    this.logger.warn(
      { billingUuid: billing.uuid, unusedInvoiceId: invoice.id },
      'Gateway invoice not stored: the billing changed while it was being created',
    );
    const theirs = storedInvoice(current);
    if (theirs && isGatewayPayable(current)) return theirs;
    assertGatewayPayable(current);
    throw new ConflictError('The billing changed while its invoice was being created; try again');
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
