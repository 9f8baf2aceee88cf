/** The gateway invoice of a billing: where the customer pays, and until when. */
export class PaymentInvoiceDto {
  /** The gateway's hosted payment page. */
  paymentUrl: string;
  gatewayInvoiceId: string;
  /** When the gateway invoice stops being payable. */
  expiresAt: Date;
}
