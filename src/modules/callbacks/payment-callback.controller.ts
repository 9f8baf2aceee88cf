import { Controller, Headers, HttpCode, Post } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { UseCredential } from '../auth/access.decorators';
import { PaymentCallbacksService } from '../billings/payment-callbacks.service';
import { CallbackPayload } from './callback-payload.decorator';
import { PaymentCallbackResultDto } from './dto/payment-callback-response.dto';
import { PaymentCallbackDto } from './dto/payment-callback.dto';

@ApiTags('callbacks')
@Controller('api/v1/callback-payment')
export class PaymentCallbackController {
  constructor(private readonly callbacks: PaymentCallbacksService) {}

  /** The payment gateway's invoice callback: stored raw, then applied; 200 once stored, 503 to be retried. */
  @Post()
  @HttpCode(200)
  @UseCredential('callback-token')
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
    @CallbackPayload() payload: Record<string, unknown>,
    @Headers('webhook-id') webhookId?: string,
  ): Promise<PaymentCallbackResultDto> {
    return this.callbacks.receive(payload, webhookId);
  }
}
