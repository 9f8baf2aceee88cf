import {
  CanActivate,
  ExecutionContext,
  ForbiddenException,
  Injectable,
  Logger,
  UnauthorizedException,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { ServiceNotConfiguredError } from '../../../common/errors/domain-error';
import { ACCESS_RULE, AccessRule } from '../access';
import { MachineCredentialsService } from '../machine-credentials.service';
import { PrincipalRepository } from '../principal.repository';
import type { AccessClaims, RequestWithPrincipal } from '../principal';
import { BearerTokenGuard, MailProviderBasicGuard } from './passport.guards';
import { AppConfig } from '../../../config/app-config';
import { mailProviderPairs } from '../strategies/mail-provider-basic.strategy';

/**
 * The global guard: closed by default. Each route declares its access rule with one of the
 * decorators of access.decorators.ts; a route without one is refused. For bearer routes the
 * caller is re-read from the database (status, role, company), so a suspension or a role
 * change takes effect within the access token's life.
 */
@Injectable()
export class AccessGuard implements CanActivate {
  private readonly logger = new Logger(AccessGuard.name);
  private readonly bearer = new BearerTokenGuard();
  private readonly basic = new MailProviderBasicGuard();
  private readonly basicConfigured: boolean;
  /** Each handler's rule, read from metadata once. */
  private readonly rules = new WeakMap<object, AccessRule>();

  constructor(
    private readonly reflector: Reflector,
    private readonly machineCredentials: MachineCredentialsService,
    private readonly principals: PrincipalRepository,
    config: AppConfig,
  ) {
    this.basicConfigured = mailProviderPairs(config).length > 0;
  }

  /** Synchronous for public and key-checked routes: no promise where no I/O is needed. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const rule = this.ruleOf(context);
    switch (rule.kind) {
      case 'public':
      case 'refresh-token':
        return true;
      case 'machine':
        if (rule.credential === 'basic') {
          if (!this.basicConfigured) throw new ServiceNotConfiguredError('Mail provider webhook credentials');
          return this.basic.canActivate(context) as Promise<boolean>;
        }
        this.machineCredentials.check(rule.credential, context.switchToHttp().getRequest<FastifyRequest>());
        return true;
      case 'user':
      case 'admin':
        return this.authenticateBearer(rule, context);
    }
  }

  private async authenticateBearer(
    rule: Extract<AccessRule, { kind: 'user' | 'admin' }>,
    context: ExecutionContext,
  ): Promise<boolean> {
    await this.bearer.canActivate(context);
    return this.authorizePrincipal(rule, context.switchToHttp().getRequest<RequestWithPrincipal>());
  }

  private ruleOf(context: ExecutionContext): AccessRule {
    const handler = context.getHandler();
    let rule = this.rules.get(handler);
    if (!rule) {
      rule = this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_RULE, [
        handler,
        context.getClass(),
      ]);
      if (!rule) {
        this.logger.error(`Route ${context.getClass().name}.${handler.name} declares no access rule`);
        throw new ForbiddenException('Access denied');
      }
      this.rules.set(handler, rule);
    }
    return rule;
  }

  private async authorizePrincipal(
    rule: Extract<AccessRule, { kind: 'user' | 'admin' }>,
    request: RequestWithPrincipal,
  ): Promise<boolean> {
    const claims = request.user as AccessClaims;
    const isAdminToken = 'adminUuid' in claims;

    if (rule.kind === 'admin') {
      if (!isAdminToken) throw new ForbiddenException('This route is for admins only');
      const admin = await this.principals.findAdmin(claims.adminUuid);
      if (!admin || !admin.isActive) throw new UnauthorizedException('Admin account no longer active');
      if (!rule.roles.includes(admin.role.name))
        throw new ForbiddenException('Your role does not allow this');
      request.principal = { kind: 'admin', admin };
      return true;
    }

    if (isAdminToken) throw new ForbiddenException('This route is for users only');
    const user = await this.principals.findUser(claims.userUuid);
    if (!user || user.status !== 'active') throw new UnauthorizedException('User account no longer active');
    if (rule.ownerOnly && user.companyRole !== 'owner') {
      throw new ForbiddenException('Only the company owner may do this');
    }
    request.principal = { kind: 'user', user };
    return true;
  }
}
