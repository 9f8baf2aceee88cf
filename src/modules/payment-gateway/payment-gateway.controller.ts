import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { CurrentUser, OwnerAuth } from '../auth/access.decorators';
import type { User } from '../users/entities/user.entity';
import { CreatePaymentInvoiceDto } from './dto/payment-invoice-request.dto';
import { PaymentInvoiceDto } from './dto/payment-invoice-response.dto';
import { PaymentGatewayService } from './payment-gateway.service';

@ApiTags('payment-gateway')
@Controller('api/v1/payment-gateway')
export class PaymentGatewayController {
  constructor(private readonly payments: PaymentGatewayService) {}

  /**
   * Create, or fetch, the payment gateway invoice of a billing.
   *
   * @remarks
   * Owner only. For a `pending` billing paid through the gateway: creates its invoice at the payment gateway
   * and returns the payment URL, invoice id and expiry, or returns the invoice already created. 409 for a
   * billing paid by manual transfer, an expired one, or one in any other status than pending; 404 for an
   * unknown uuid or another company's billing; 503 when the payment gateway is not configured; 502 when the
   * gateway refuses or fails; 504 when it does not answer in time.
   */
  @Post()
  @HttpCode(200)
  @OwnerAuth()
  @ResponseMessage('Payment invoice ready')
  @ApiEnvelope(PaymentInvoiceDto)
  @ApiErrors(400, 404, 409, 502, 503, 504)
  create(@CurrentUser() user: User, @Body() dto: CreatePaymentInvoiceDto): Promise<PaymentInvoiceDto> {
    return this.payments.invoiceFor(user, dto.billingUuid);
  }
}
