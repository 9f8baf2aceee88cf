import {
  CanActivate,
  ExecutionContext,
  ForbiddenException,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AppConfig } from '../../config/app-config';
import { METRICS_FORBIDDEN, METRICS_UNAUTHORIZED, MetricsAccessRule } from './metrics-access';

/** MetricsAccessRule on the API's `/metrics`: 401 without the token, 403 off loopback. */
@Injectable()
export class MetricsAccessGuard implements CanActivate {
  private readonly rule: MetricsAccessRule;

  constructor(config: AppConfig) {
    this.rule = new MetricsAccessRule(config.env.METRICS_TOKEN);
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    switch (this.rule.check({ headers: request.headers, socket: request.raw.socket })) {
      case 'allowed':
        return true;
      case 'unauthorized':
        throw new UnauthorizedException(METRICS_UNAUTHORIZED);
      case 'forbidden':
        throw new ForbiddenException(METRICS_FORBIDDEN);
    }
  }
}
