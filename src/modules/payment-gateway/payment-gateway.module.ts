import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Billing } from '../billings/entities/billing.entity';
import { PaymentGatewayClient } from './payment-gateway.client';
import { PaymentGatewayController } from './payment-gateway.controller';
import { PaymentGatewayService } from './payment-gateway.service';

/** The payment gateway (integrations.md): its HTTP client and the route that creates a billing's invoice. */
@Module({
  imports: [TypeOrmModule.forFeature([Billing])],
  controllers: [PaymentGatewayController],
  providers: [PaymentGatewayClient, PaymentGatewayService],
  exports: [PaymentGatewayClient],
})
export class PaymentGatewayModule {}
