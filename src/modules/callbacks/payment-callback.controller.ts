import { Controller, Headers, HttpCode, Post } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiTags } from '@nestjs/swagger';
import { InboundBody, InboundBodyValue } from '../../common/http/inbound-body.decorator';
import { LargeBody } from '../../common/http/large-body';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { UseCredential } from '../auth/access.decorators';
import { PaymentCallbacksService } from '../billings/payment-callbacks.service';
import { PaymentCallbackResultDto } from './dto/payment-callback-response.dto';
import { PaymentCallbackDto } from './dto/payment-callback.dto';

@ApiTags('callbacks')
@Controller('api/v1/callback-payment')
export class PaymentCallbackController {
  constructor(private readonly callbacks: PaymentCallbacksService) {}

  /**
   * Receive the payment gateway's invoice callback.
   *
   * @remarks
   * For the payment gateway, with the `x-callback-token` header: 401 for a wrong token, 503 while
   * PAYMENT_CALLBACK_TOKEN is unset. Bodies up to 10 MB, gzip accepted. The callback is stored as received,
   * then applied to its billing; the answer is 200 with the outcome once it is stored, and a repeated
   * `webhook-id` is recognised as a duplicate. A 503 asks the gateway to retry later. 400 for a body that is
   * not an invoice callback.
   */
  @Post()
  @HttpCode(200)
  @UseCredential('callback-token')
  @LargeBody()
  @ResponseMessage('Payment callback received')
  @ApiBody({ type: PaymentCallbackDto })
  @ApiHeader({
    name: 'webhook-id',
    required: false,
    description: 'Delivery id; a repeated one is a duplicate',
  })
  @ApiEnvelope(PaymentCallbackResultDto)
  @ApiErrors(400)
  receive(
    @InboundBody({ json: 'object' }) payload: InboundBodyValue,
    @Headers('webhook-id') webhookId?: string,
  ): Promise<PaymentCallbackResultDto> {
    return this.callbacks.receive(payload.body as Record<string, unknown>, webhookId);
  }
}
