import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { CompaniesModule } from '../companies/companies.module';
import { DomainsModule } from '../domains/domains.module';
import { ApiKeysAdminController } from './api-keys-admin.controller';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeysService } from './api-keys.service';
import { ApiKey } from './entities/api-key.entity';

/** Customers' API keys: made and revoked here, checked by the access guard (auth/api-key-authenticator). */
@Module({
  imports: [TypeOrmModule.forFeature([ApiKey]), AuthModule, CompaniesModule, DomainsModule],
  controllers: [ApiKeysController, ApiKeysAdminController],
  providers: [ApiKeysService],
})
export class ApiKeysModule {}
