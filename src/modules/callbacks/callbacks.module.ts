import { Module } from '@nestjs/common';
import { BillingsModule } from '../billings/billings.module';
import { PaymentCallbackController } from './payment-callback.controller';

/**
 * Inbound callbacks of outside systems: thin controllers behind their machine-credential
 * guards, delegating to the service of the area that owns the data.
 */
@Module({
  imports: [BillingsModule],
  controllers: [PaymentCallbackController],
})
export class CallbacksModule {}
