import {
  applyDecorators,
  CanActivate,
  ExecutionContext,
  ForbiddenException,
  Injectable,
  mixin,
  NotFoundException,
  Type,
  UseGuards,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { FastifyRequest } from 'fastify';
import { DataSource, EntityTarget } from 'typeorm';
import { ApiErrors } from '../../../common/swagger/api-envelope.decorator';
import type { RequestWithPrincipal } from '../principal';

type ScopedRequest = FastifyRequest<{ Params: Record<string, string | undefined> }> & RequestWithPrincipal;

function userCompanyId(request: ScopedRequest): { id: number; uuid: string } {
  const principal = request.principal;
  // Ownership rules apply to users; the access guard has already loaded the user and its company.
  if (principal?.kind !== 'user') throw new ForbiddenException('This route is for company users only');
  return { id: principal.user.companyId, uuid: principal.user.company.uuid };
}

/** `:companyUuid` must be the caller's own company (read from the database by the access guard): 403 otherwise. */
@Injectable()
export class CompanyOwnershipGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<ScopedRequest>();
    const company = userCompanyId(request);
    if (request.params.companyUuid !== company.uuid) {
      throw new ForbiddenException('This company is not yours');
    }
    return true;
  }
}

/**
 * Builds a guard that loads the resource named by the route's `:param` and refuses (404, so
 * existence is not revealed) when it belongs to another company or does not exist.
 */
export function OwnedResourceGuard(
  entity: EntityTarget<{ companyId: number | null }>,
  notFoundMessage: string,
  param = 'uuid',
): Type<CanActivate> {
  @Injectable()
  class ResourceOwnershipGuard implements CanActivate {
    constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

    async canActivate(context: ExecutionContext): Promise<boolean> {
      const request = context.switchToHttp().getRequest<ScopedRequest>();
      const company = userCompanyId(request);
      const uuid = request.params[param];
      const found = uuid
        ? await this.dataSource
            .getRepository(entity)
            .createQueryBuilder('resource')
            .select('resource.companyId')
            .where('resource.uuid = :uuid', { uuid })
            .getOne()
        : null;
      if (!found || found.companyId !== company.id) throw new NotFoundException(notFoundMessage);
      return true;
    }
  }
  return mixin(ResourceOwnershipGuard);
}

/** The route's `:companyUuid` is the caller's company (403 otherwise). Use after @UserAuth/@OwnerAuth. */
export const CompanyScoped = () => applyDecorators(UseGuards(CompanyOwnershipGuard), ApiErrors(403));

/** The route's `:uuid` resource belongs to the caller's company (404 otherwise). Use after @UserAuth/@OwnerAuth. */
export const OwnedResource = (
  entity: EntityTarget<{ companyId: number | null }>,
  notFoundMessage: string,
  param = 'uuid',
) => applyDecorators(UseGuards(OwnedResourceGuard(entity, notFoundMessage, param)), ApiErrors(404));
