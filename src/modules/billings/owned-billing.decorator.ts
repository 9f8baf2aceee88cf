import { applyDecorators, CanActivate, ExecutionContext, Injectable, UseGuards } from '@nestjs/common';
import { isUUID } from 'class-validator';
import type { FastifyRequest } from 'fastify';
import { ValidationFailedException } from '../../common/errors/validation-failed.exception';
import { ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { OwnedResource } from '../auth/guards/company-ownership.guard';
import { BILLING_NOT_FOUND } from './billing-queries';
import { Billing } from './entities/billing.entity';

/**
 * Guards run before pipes: this one refuses a malformed `:uuid` (400) before the ownership
 * guard looks it up, so a bad id is reported as bad input rather than as "not found".
 */
@Injectable()
class UuidParamGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest<{ Params: { uuid?: string } }>>();
    if (!isUUID(request.params.uuid ?? '')) {
      throw new ValidationFailedException([{ field: 'uuid', messages: ['uuid must be a UUID'] }]);
    }
    return true;
  }
}

/** The route's `:uuid` is a billing of the caller's company: 400 malformed, 404 absent or another company's. */
export const OwnedBilling = () =>
  applyDecorators(UseGuards(UuidParamGuard), OwnedResource(Billing, BILLING_NOT_FOUND), ApiErrors(400));
