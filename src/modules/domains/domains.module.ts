import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersModule } from '../users/users.module';
import { WebhookOutboxModule } from '../webhooks/webhook-outbox.module';
import { DkimKeyPairs } from './dkim-key-pairs';
import { DomainDnsChecker } from './domain-dns-checker';
import { DomainLookupModule } from './domain-lookup';
import { DomainsAdminController } from './domains-admin.controller';
import { DomainsController } from './domains.controller';
import { DomainsService } from './domains.service';
import { Domain } from './entities/domain.entity';
import { VerifyRateLimit } from './verify-rate-limit';
import { NotificationsModule } from '../notifications/notifications.module';
import { RateLimitModule } from '../../common/rate-limit/rate-limit.module';

/** Sender domains: add, DNS records to publish, live verification, the daily re-check. */
@Module({
  imports: [
    TypeOrmModule.forFeature([Domain]),
    DomainLookupModule,
    UsersModule,
    WebhookOutboxModule,
    NotificationsModule,
    RateLimitModule,
  ],
  controllers: [DomainsController, DomainsAdminController],
  providers: [DomainsService, DkimKeyPairs, DomainDnsChecker, VerifyRateLimit],
  exports: [DomainsService, DomainLookupModule],
})
export class DomainsModule {}
