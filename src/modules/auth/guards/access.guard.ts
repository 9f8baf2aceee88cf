import {
  CanActivate,
  ExecutionContext,
  ForbiddenException,
  Injectable,
  Logger,
  UnauthorizedException,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ServiceNotConfiguredError } from '../../../common/errors/domain-error';
import { ACCESS_RULE, AccessRule, KEY_SCOPES_FOR } from '../access';
import { ApiKeyAuthenticator } from '../api-key-authenticator';
import { apiKeyOf } from '../api-key-secret';
import { MachineCredentialsService } from '../machine-credentials.service';
import { PrincipalRepository } from '../principal.repository';
import type { AccessClaims, RequestWithPrincipal } from '../principal';
import { JwtStrategy } from '../strategies/jwt.strategy';
import { MailProviderBasicStrategy } from '../strategies/mail-provider-basic.strategy';

/**
 * The global guard: closed by default. Each route declares its access rule with one of the
 * decorators of access.decorators.ts; a route without one is refused. For bearer routes the
 * caller is re-read from the database (status, role, company), so a suspension or a role
 * change takes effect within the access token's life.
 */
@Injectable()
export class AccessGuard implements CanActivate {
  private readonly logger = new Logger(AccessGuard.name);
  /** Each handler's rule, read from metadata once. */
  private readonly rules = new WeakMap<object, AccessRule>();

  constructor(
    private readonly reflector: Reflector,
    private readonly machineCredentials: MachineCredentialsService,
    private readonly principals: PrincipalRepository,
    private readonly bearer: JwtStrategy,
    private readonly basic: MailProviderBasicStrategy,
    private readonly apiKeys: ApiKeyAuthenticator,
  ) {}

  /** A promise only where there is I/O: the principal or API key lookups. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const rule = this.ruleOf(context);
    switch (rule.kind) {
      case 'public':
      case 'refresh-token':
        return true;
      case 'machine':
        if (rule.credential === 'basic') {
          if (!this.basic.configured)
            throw new ServiceNotConfiguredError('Mail provider webhook credentials');
          const http = context.switchToHttp();
          this.basic.authenticate(http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>());
          return true;
        }
        this.machineCredentials.check(rule.credential, context.switchToHttp().getRequest<FastifyRequest>());
        return true;
      case 'user':
      case 'admin': {
        const request = context.switchToHttp().getRequest<RequestWithPrincipal & FastifyRequest>();
        const key = apiKeyOf(request);
        if (key !== undefined) return this.authorizeApiKey(rule, key, request);
        request.user = this.bearer.authenticate(request);
        return this.authorizePrincipal(rule, request);
      }
    }
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

  /**
   * A customer API key, on the routes whose rule names the keys it opens (platform.md "Using a
   * key"): the request then acts for the key's company.
   */
  private async authorizeApiKey(
    rule: Extract<AccessRule, { kind: 'user' | 'admin' }>,
    key: string,
    request: RequestWithPrincipal & FastifyRequest,
  ): Promise<boolean> {
    if (rule.kind !== 'user' || !rule.key) throw new ForbiddenException("This route needs a user's token");
    const scopes = KEY_SCOPES_FOR[rule.key];
    const { key: apiKey, company } = await this.apiKeys.authenticate(key, request.ip);
    if (!scopes.includes(apiKey.scope))
      throw new ForbiddenException('API key scope does not allow this route');
    request.principal = { kind: 'api-key', apiKey, company };
    return true;
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
