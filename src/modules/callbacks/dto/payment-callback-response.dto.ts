import { ApiProperty } from '@nestjs/swagger';
import { PAYMENT_OUTCOMES, type PaymentOutcome } from '../../billings/entities/payment-event.entity';

export class PaymentCallbackResultDto {
  /** The billing the callback was matched to, when one was. */
  billingUuid?: string;

  /** applied: the billing changed; duplicate: a copy of a stored callback; ignored: nothing to apply; mismatch: amount or currency differs (accounting notified). */
  @ApiProperty({ enum: PAYMENT_OUTCOMES })
  outcome: PaymentOutcome;
}
