import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiResponse, ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { ApiEnvelope, ApiErrors, ErrorEnvelopeDto } from '../../common/swagger/api-envelope.decorator';
import { CurrentUser, OwnerAuth } from '../auth/access.decorators';
import { User } from '../users/entities/user.entity';
import { CreatePaymentInvoiceDto } from './dto/payment-invoice-request.dto';
import { PaymentInvoiceDto } from './dto/payment-invoice-response.dto';
import { PaymentGatewayService } from './payment-gateway.service';

@ApiTags('payment-gateway')
@Controller('api/v1/payment-gateway')
export class PaymentGatewayController {
  constructor(private readonly payments: PaymentGatewayService) {}

  /** Creates the gateway invoice of a `pending` gateway billing, or returns the one already created. */
  @Post()
  @HttpCode(200)
  @OwnerAuth()
  @ResponseMessage('Payment invoice ready')
  @ApiEnvelope(PaymentInvoiceDto)
  @ApiErrors(400, 404, 409, 503)
  @ApiResponse({
    status: 502,
    description: 'The gateway refused or failed (its message)',
    type: ErrorEnvelopeDto,
  })
  @ApiResponse({ status: 504, description: 'The gateway did not answer in time', type: ErrorEnvelopeDto })
  create(@CurrentUser() user: User, @Body() dto: CreatePaymentInvoiceDto): Promise<PaymentInvoiceDto> {
    return this.payments.invoiceFor(user, dto.billingUuid);
  }
}
