import { IsUUID } from 'class-validator';

export class CreatePaymentInvoiceDto {
  /** A `pending` gateway billing of the caller's company. */
  @IsUUID()
  billingUuid: string;
}
