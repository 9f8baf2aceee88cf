import { HttpStatus, Injectable, Logger } from '@nestjs/common';
import { DomainError, ServiceNotConfiguredError } from '../../common/errors/domain-error';
import { isTimeout, parseJsonObject } from '../../common/http/outbound';
import { AppConfig } from '../../config/app-config';

/** What we ask the gateway for (integrations.md, "Payment gateway"). */
export interface CreateGatewayInvoice {
  externalId: string;
  amount: number;
  currency: string;
  payerEmail: string;
  description: string;
  /** Seconds the invoice stays payable. */
  invoiceDuration: number;
}

/** The parts of the gateway's invoice we keep. */
export interface GatewayInvoice {
  id: string;
  invoiceUrl: string;
  expiresAt: Date | null;
}

/** The gateway refused or failed (its answer was 4xx/5xx, unreachable, or unreadable): 502. */
export class PaymentGatewayError extends DomainError {
  constructor(message: string) {
    super(HttpStatus.BAD_GATEWAY, message);
  }
}

/** The gateway did not answer in time: 504. */
export class PaymentGatewayTimeoutError extends DomainError {
  constructor() {
    super(HttpStatus.GATEWAY_TIMEOUT, 'Payment gateway did not answer in time');
  }
}

const MAX_MESSAGE = 500;

/**
 * A Xendit-compatible invoice API: `POST {PAYMENT_GATEWAY_URL}/v2/invoices` with HTTP Basic
 * (secret key as the user, empty password). Each call is bounded by PAYMENT_GATEWAY_TIMEOUT_MS
 * (10 s unless configured).
 */
@Injectable()
export class PaymentGatewayClient {
  private readonly logger = new Logger(PaymentGatewayClient.name);

  constructor(private readonly config: AppConfig) {}

  get isConfigured(): boolean {
    return Boolean(this.config.env.PAYMENT_GATEWAY_SECRET_KEY);
  }

  /** Throws 503 when no secret key is set, 502 for any gateway failure, 504 on timeout. */
  async createInvoice(request: CreateGatewayInvoice): Promise<GatewayInvoice> {
    const env = this.config.env;
    const secret = env.PAYMENT_GATEWAY_SECRET_KEY;
    if (!secret) throw new ServiceNotConfiguredError('Payment gateway');

    const body: Record<string, unknown> = {
      external_id: request.externalId,
      amount: request.amount,
      currency: request.currency,
      payer_email: request.payerEmail,
      description: request.description,
      invoice_duration: request.invoiceDuration,
    };
    if (env.PAYMENT_SUCCESS_URL) body.success_redirect_url = env.PAYMENT_SUCCESS_URL;
    if (env.PAYMENT_FAILURE_URL) body.failure_redirect_url = env.PAYMENT_FAILURE_URL;

    const url = `${env.PAYMENT_GATEWAY_URL.replace(/\/+$/, '')}/v2/invoices`;
    let status: number;
    let text: string;
    try {
      // One signal bounds the whole exchange: connecting, the headers and the body.
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${secret}:`).toString('base64')}`,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(env.PAYMENT_GATEWAY_TIMEOUT_MS),
      });
      status = response.status;
      text = await response.text();
    } catch (e) {
      if (isTimeout(e)) throw new PaymentGatewayTimeoutError();
      this.logger.error({ err: e }, 'Payment gateway unreachable');
      throw new PaymentGatewayError('Payment gateway is unreachable');
    }

    const answer = parseJsonObject(text);
    if (status < 200 || status >= 300) {
      const message = typeof answer?.message === 'string' && answer.message.trim() ? answer.message : '';
      this.logger.warn({ status, errorCode: answer?.error_code }, 'Payment gateway refused an invoice');
      throw new PaymentGatewayError(
        message ? message.slice(0, MAX_MESSAGE) : `Payment gateway answered HTTP ${status}`,
      );
    }
    const id = answer?.id;
    const invoiceUrl = answer?.invoice_url;
    if (typeof id !== 'string' || !id || typeof invoiceUrl !== 'string' || !invoiceUrl) {
      throw new PaymentGatewayError('Payment gateway answered without an invoice id and URL');
    }
    const expiry = typeof answer?.expiry_date === 'string' ? new Date(answer.expiry_date) : null;
    return {
      id,
      invoiceUrl,
      expiresAt: expiry && !Number.isNaN(expiry.getTime()) ? expiry : null,
    };
  }
}
