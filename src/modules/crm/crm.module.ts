import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CompaniesModule } from '../companies/companies.module';
import { UsersModule } from '../users/users.module';
import { CrmAdminController } from './crm-admin.controller';
import { CrmClient } from './crm.client';
import { CrmConnectionService } from './crm-connection.service';
import { CrmOutboxModule } from './crm-outbox.module';
import { CrmController } from './crm.controller';
import { CrmSyncService } from './crm-sync.service';
import { CrmConnection } from './entities/crm-connection.entity';
import { CrmOAuthState } from './entities/crm-oauth-state.entity';
import { CrmOutboxEntry } from './entities/crm-outbox-entry.entity';

/** The CRM link (integrations.md, "CRM"): the OAuth connection and the outbox of companies to upsert. */
@Module({
  imports: [
    TypeOrmModule.forFeature([CrmConnection, CrmOAuthState, CrmOutboxEntry]),
    CompaniesModule,
    UsersModule,
    CrmOutboxModule,
  ],
  controllers: [CrmController, CrmAdminController],
  providers: [CrmClient, CrmConnectionService, CrmSyncService],
})
export class CrmModule {}
