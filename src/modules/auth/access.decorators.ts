import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiBasicAuth, ApiBearerAuth, ApiSecurity } from '@nestjs/swagger';
import { ApiErrors } from '../../common/swagger/api-envelope.decorator';
import type { AdminRoleName } from '../admins/entities/admin-role.entity';
import type { Admin } from '../admins/entities/admin.entity';
import type { ApiKey } from '../api-keys/entities/api-key.entity';
import type { User } from '../users/entities/user.entity';
import type { Company } from '../companies/entities/company.entity';
import { ACCESS_RULE, AccessRule, KeyAccess, MachineCredential } from './access';
import type { RequestWithPrincipal } from './principal';

const rule = (r: AccessRule) => SetMetadata(ACCESS_RULE, r);

/** Open to anyone: no credential is read. */
export const Public = () => rule({ kind: 'public' });

/** The body or the Bearer header carries a refresh token, which the handler verifies. */
export const RefreshTokenAuth = () =>
  applyDecorators(rule({ kind: 'refresh-token' }), ApiBearerAuth('bearer'), ApiErrors(400, 401));

export interface CustomerAuthOptions {
  /** Which customer API keys may call the route as well (KEY_SCOPES_FOR); none when absent. */
  key?: KeyAccess;
}

const customerAuth = (ownerOnly: boolean, { key }: CustomerAuthOptions) =>
  applyDecorators(
    rule({ kind: 'user', ownerOnly, ...(key && { key }) }),
    ApiBearerAuth('bearer'),
    ...(key ? [ApiBearerAuth('customer-api-key')] : []),
    ApiErrors(401, 403),
  );

/** An active user (access token), re-read from the database; or an API key when `key` says which. */
export const UserAuth = (options: CustomerAuthOptions = {}) => customerAuth(false, options);

/** An active user whose company role is `owner`; or an API key when `key` says which. */
export const OwnerAuth = (options: CustomerAuthOptions = {}) => customerAuth(true, options);

export const ALL_ADMIN_ROLES: readonly AdminRoleName[] = ['superAdmin', 'admin', 'accounting'];

/** An active admin whose stored role (read from the database, not the token) is one of `roles`. */
export const AdminRoles = (...roles: AdminRoleName[]) =>
  applyDecorators(
    rule({ kind: 'admin', roles: roles.length ? roles : ALL_ADMIN_ROLES }),
    ApiBearerAuth('bearer'),
    ApiErrors(401, 403),
  );

const MACHINE_SECURITY: Record<MachineCredential, () => MethodDecorator & ClassDecorator> = {
  'api-key': () => ApiSecurity('api-key'),
  'log-shipper-key': () => ApiSecurity('api-key'),
  'callback-token': () => ApiSecurity('callback-token'),
  basic: () => ApiBasicAuth('basic'),
};

/** A machine credential of auth.md instead of a bearer token; 503 while its secret is unset. */
export const UseCredential = (credential: MachineCredential) =>
  applyDecorators(rule({ kind: 'machine', credential }), MACHINE_SECURITY[credential](), ApiErrors(401, 503));

/** The authenticated user entity (with contact and company), as loaded by the access guard. */
export const CurrentUser = createParamDecorator((_data: unknown, ctx: ExecutionContext): User => {
  const principal = ctx.switchToHttp().getRequest<RequestWithPrincipal>().principal;
  if (principal?.kind !== 'user') throw new Error('CurrentUser used on a route without @UserAuth/@OwnerAuth');
  return principal.user;
});

/** The authenticated admin entity (with role), as loaded by the access guard. */
export const CurrentAdmin = createParamDecorator((_data: unknown, ctx: ExecutionContext): Admin => {
  const principal = ctx.switchToHttp().getRequest<RequestWithPrincipal>().principal;
  if (principal?.kind !== 'admin') throw new Error('CurrentAdmin used on a route without @AdminRoles');
  return principal.admin;
});

/** The API key the request comes with, or null when a user calls (on the routes a key may call). */
export const CallerApiKey = createParamDecorator((_data: unknown, ctx: ExecutionContext): ApiKey | null => {
  const principal = ctx.switchToHttp().getRequest<RequestWithPrincipal>().principal;
  return principal?.kind === 'api-key' ? principal.apiKey : null;
});

/**
 * The company the request acts for: the user's (with @UserAuth/@OwnerAuth) or the API key's, on
 * the routes a key may call.
 */
export const CallerCompany = createParamDecorator((_data: unknown, ctx: ExecutionContext): Company => {
  const principal = ctx.switchToHttp().getRequest<RequestWithPrincipal>().principal;
  if (principal?.kind === 'user') return principal.user.company;
  if (principal?.kind === 'api-key') return principal.company;
  throw new Error('CallerCompany used on a route without @UserAuth/@OwnerAuth');
});
