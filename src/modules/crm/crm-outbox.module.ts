import { Module } from '@nestjs/common';
import { CrmRegistrationQueue } from './crm-registration-queue';

/**
 * The CRM outbox as the companies area writes it at sign-up: CompaniesModule imports this, and
 * CrmModule (which imports CompaniesModule) imports it too, to send what is queued. It imports
 * nothing of another area; the row is written through the caller's transaction manager, so no
 * repository is registered here.
 */
@Module({
  providers: [CrmRegistrationQueue],
  exports: [CrmRegistrationQueue],
})
export class CrmOutboxModule {}
