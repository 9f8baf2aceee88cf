import { Module } from '@nestjs/common';
import { BillingsModule } from '../billings/billings.module';
import { PaymentGatewayClient } from './payment-gateway.client';
import { PaymentGatewayController } from './payment-gateway.controller';
import { PaymentGatewayService } from './payment-gateway.service';

/** The payment gateway (integrations.md): its HTTP client and the route that creates a billing's invoice. */
@Module({
  imports: [BillingsModule],
  controllers: [PaymentGatewayController],
  providers: [PaymentGatewayClient, PaymentGatewayService],
  exports: [PaymentGatewayClient],
})
export class PaymentGatewayModule {}
