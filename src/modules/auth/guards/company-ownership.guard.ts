import {
  applyDecorators,
  CanActivate,
  createParamDecorator,
  ExecutionContext,
  ForbiddenException,
  Injectable,
  mixin,
  NotFoundException,
  Type,
  UseGuards,
} from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import type { FastifyRequest } from 'fastify';
import { DataSource, EntityTarget, FindOptionsWhere, ObjectLiteral } from 'typeorm';
import { ApiErrors } from '../../../common/swagger/api-envelope.decorator';
import { requireUuid } from '../../../common/validation/uuid-param.pipe';
import type { Principal, RequestWithPrincipal } from '../principal';

/**
 * Ownership, in one shape (auth.md "Guards", STYLE.md habit 4). Two decorators, used after
 * @UserAuth / @OwnerAuth / @AdminRoles (the global access guard has already loaded the caller):
 *
 * - `@CompanyScoped()`: the route's `:companyUuid` is the caller's company, 403 otherwise.
 * - `@OwnedResource(Entity, 'Entity not found', { param, ownedBy })`: loads the row whose `uuid`
 *   is the route's `:param` (default `uuid`) and that the caller owns, 404 when there is none
 *   (another owner's row is refused exactly like a missing one, so existence is not revealed);
 *   the handler receives the loaded row with `@OwnedEntity()` and does not look it up again.
 *
 * Both check the path id with requireUuid first: a malformed one is a 400, never a 403 or 404.
 *
 * A new area (domains, say) needs no new guard:
 *
 * ```ts
 * @Delete(':uuid')
 * @OwnerAuth()
 * @OwnedResource(Domain, 'Domain not found')
 * remove(@OwnedEntity() domain: Domain) { return this.domains.remove(domain); }
 * ```
 */

/** Who owns a resource, as a where-clause on its columns for the caller; may refuse the caller (403). */
export type OwnerScope<T extends ObjectLiteral> = (principal: Principal | undefined) => FindOptionsWhere<T>;

export interface OwnedResourceOptions<T extends ObjectLiteral> {
  /** The route parameter holding the resource's uuid (default `uuid`). */
  param?: string;
  /** Who owns it (default: the calling user's company, by `companyId`). */
  ownedBy?: OwnerScope<T>;
}

type ScopedRequest = FastifyRequest<{ Params: Record<string, string | undefined> }> &
  RequestWithPrincipal & {
    /** The rows loaded by the ownership guards, by route parameter; read with @OwnedEntity(). */
    ownedEntities?: Record<string, unknown>;
  };

function userCompany(principal: Principal | undefined): { id: number; uuid: string } {
  // Company ownership applies to users and API keys; the access guard has already loaded the company.
  if (principal?.kind === 'user') return { id: principal.user.companyId, uuid: principal.user.company.uuid };
  if (principal?.kind === 'api-key') return { id: principal.company.id, uuid: principal.company.uuid };
  throw new ForbiddenException('This route is for company users only');
}

/** 400 for a malformed `:companyUuid`, 403 when it is not the caller's company. */
function checkCompanyParam(request: ScopedRequest): void {
  const companyUuid = requireUuid(request.params.companyUuid);
  if (companyUuid !== userCompany(request.principal).uuid) {
    throw new ForbiddenException('This company is not yours');
  }
}

/** Owned by the calling user's company (`companyId`); admins are refused (403). The default. */
export const byCallerCompany: OwnerScope<{ companyId: number | null }> = (principal) => ({
  companyId: userCompany(principal).id,
});

/** Owned by the caller itself: `userId` for a user, `adminId` for an admin (notifications). */
export const byCaller: OwnerScope<{ userId: number | null; adminId: number | null }> = (principal) => {
  if (principal?.kind === 'user') return { userId: principal.user.id };
  if (principal?.kind === 'admin') return { adminId: principal.admin.id };
  throw new ForbiddenException('This route needs a signed-in user or admin');
};

/** `:companyUuid` must be the caller's own company (read from the database by the access guard): 403 otherwise. */
@Injectable()
export class CompanyOwnershipGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    checkCompanyParam(context.switchToHttp().getRequest<ScopedRequest>());
    return true;
  }
}

/**
 * Builds a guard that loads the resource named by the route's `:param` among the caller's own
 * (`ownedBy`), refuses with 404 when there is none, and keeps the row on the request for
 * @OwnedEntity(param). On a route under `:companyUuid` that parameter is checked first (400/403,
 * as CompanyScoped does), so the 403 wins over the 404 whatever order the decorators are in.
 */
export function OwnedResourceGuard<T extends ObjectLiteral>(
  entity: EntityTarget<T>,
  notFoundMessage: string,
  options: OwnedResourceOptions<T> = {},
): Type<CanActivate> {
  const param = options.param ?? 'uuid';
  const ownedBy = options.ownedBy ?? (byCallerCompany as unknown as OwnerScope<T>);

  @Injectable()
  class ResourceOwnershipGuard implements CanActivate {
    constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

    async canActivate(context: ExecutionContext): Promise<boolean> {
      const request = context.switchToHttp().getRequest<ScopedRequest>();
      if ('companyUuid' in request.params) checkCompanyParam(request);
      const uuid = requireUuid(request.params[param]);
      const where = { ...ownedBy(request.principal), uuid } as FindOptionsWhere<T>;
      const found = await this.dataSource.getRepository(entity).findOne({ where });
      if (!found) throw new NotFoundException(notFoundMessage);
      request.ownedEntities = { ...request.ownedEntities, [param]: found };
      return true;
    }
  }
  return mixin(ResourceOwnershipGuard);
}

/** The route's `:companyUuid` is the caller's company (403 otherwise). Use after @UserAuth/@OwnerAuth. */
export const CompanyScoped = () =>
  applyDecorators(
    UseGuards(CompanyOwnershipGuard),
    ApiParam({
      name: 'companyUuid',
      description: "The uuid of the caller's own company; another company's is refused with 403",
      schema: { type: 'string', format: 'uuid' },
    }),
    ApiErrors(403),
  );

/**
 * The route's `:uuid` (or `options.param`) is a resource the caller owns: 400 malformed, 404
 * absent or another owner's. Use after the access decorator; read the row with @OwnedEntity().
 */
export const OwnedResource = <T extends ObjectLiteral>(
  entity: EntityTarget<T>,
  notFoundMessage: string,
  options: OwnedResourceOptions<T> = {},
) =>
  applyDecorators(
    UseGuards(OwnedResourceGuard(entity, notFoundMessage, options)),
    ApiParam({
      name: options.param ?? 'uuid',
      description: "The resource's uuid; another owner's is refused with 404, like an unknown one",
      schema: { type: 'string', format: 'uuid' },
    }),
    ApiErrors(400, 404),
  );

/**
 * The row @OwnedResource loaded for the route parameter `param` (default `uuid`). Using it on a
 * route without that guard is a programming error (500), never a silent undefined.
 */
export const OwnedEntity = createParamDecorator(
  (param: string | undefined, ctx: ExecutionContext): unknown => {
    const key = param ?? 'uuid';
    const owned = ctx.switchToHttp().getRequest<ScopedRequest>().ownedEntities;
    if (!owned || !(key in owned))
      throw new Error(`@OwnedEntity('${key}') used on a route without @OwnedResource`);
    return owned[key];
  },
);
