import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CompanyRelayModule } from '../companies/company-relay.module';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { ApiKeyEvents } from './api-key-events';
import { AuthController } from './auth.controller';
import { AuthService } from './auth.service';
import { BlacklistService } from './blacklist.service';
import { CredentialsService } from './credentials.service';
import { RevokedRefreshToken } from './entities/revoked-refresh-token.entity';
import { AccessGuard } from './guards/access.guard';
import { MachineCredentialsService } from './machine-credentials.service';
import { PasswordService } from './password.service';
import { PrincipalRepository } from './principal.repository';
import { JwtStrategy } from './strategies/jwt.strategy';
import { MailProviderBasicStrategy } from './strategies/mail-provider-basic.strategy';
import { TokenService } from './token.service';
import { MailModule } from '../mail/mail.module';

@Module({
  imports: [TypeOrmModule.forFeature([RevokedRefreshToken]), CompanyRelayModule, MailModule],
  controllers: [AuthController],
  providers: [
    AuthService,
    CredentialsService,
    TokenService,
    PasswordService,
    BlacklistService,
    MachineCredentialsService,
    PrincipalRepository,
    JwtStrategy,
    MailProviderBasicStrategy,
    ApiKeyAuthenticator,
    ApiKeyEvents,
    { provide: APP_GUARD, useClass: AccessGuard },
  ],
  exports: [TokenService, PasswordService, BlacklistService, CredentialsService, ApiKeyEvents],
})
export class AuthModule {}
