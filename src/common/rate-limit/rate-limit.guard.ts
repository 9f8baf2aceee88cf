import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { AppConfig } from '../../config/app-config';
import { ACCESS_RULE, AccessRule } from '../../modules/auth/access';
import { apiKeyDigest, apiKeyOf } from '../../modules/auth/api-key-secret';
import { RATE_LIMIT_POLICY, RateLimitPolicy, SKIP_GENERAL_RATE_LIMIT } from './rate-limit.decorator';
import { consumeOrRefuse, RateLimiters } from './rate-limiters';

const MINUTE = 60;
const HOUR = 3_600;
const TOO_MANY = 'Too many requests, try again later';

interface RouteLimits {
  general: boolean;
  policy?: RateLimitPolicy;
}

/**
 * The rate limits of quality.md. Runs before authentication so failed attempts count too.
 * Machine-credential routes are not counted. The Redis keys (`rl:<kind>:<key>`) are the same
 * whichever replica counts.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly routes = new WeakMap<object, RouteLimits>();
  /** Per client address (RATE_LIMIT_PER_MINUTE). */
  private readonly perIp: RateLimiterAbstract;
  /** A customer API key is counted as itself, wherever it calls from (platform.md "Using a key"). */
  private readonly perApiKey: RateLimiterAbstract;
  /** Per address and e-mail, on the login routes. */
  private readonly login: RateLimiterAbstract;
  /** Per route and e-mail (forgot-password, resend-verification). */
  private readonly perEmail: RateLimiterAbstract;

  constructor(
    private readonly reflector: Reflector,
    config: AppConfig,
    limiters: RateLimiters,
  ) {
    const env = config.env;
    const limit = (kind: string, points: number, duration: number) =>
      limiters.create({ keyPrefix: `rl:${kind}`, points, duration }).limiter;
    this.perIp = limit('ip', env.RATE_LIMIT_PER_MINUTE, MINUTE);
    this.perApiKey = limit('api-key', env.API_KEY_RATE_LIMIT_PER_MINUTE, MINUTE);
    this.login = limit('login', env.LOGIN_RATE_LIMIT_PER_MINUTE, MINUTE);
    this.perEmail = limit('email', env.EMAIL_RATE_LIMIT_PER_HOUR, HOUR);
  }

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const limits = this.limitsFor(context);
    if (!limits.general && !limits.policy) return true;
    return this.count(
      limits,
      context.switchToHttp().getRequest<FastifyRequest>(),
      context.switchToHttp().getResponse<FastifyReply>(),
    );
  }

  /** One limit after the other: a request refused by the general limit is not counted by its route's. */
  private async count(limits: RouteLimits, request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    if (limits.general) {
      const apiKey = apiKeyOf(request);
      if (apiKey === undefined) await consumeOrRefuse(this.perIp, request.ip, reply, TOO_MANY);
      else await consumeOrRefuse(this.perApiKey, apiKeyDigest(apiKey), reply, TOO_MANY);
    }
    if (limits.policy) {
      const email = emailOf(request.body);
      if (limits.policy === 'login') {
        await consumeOrRefuse(this.login, `${request.ip}:${email}`, reply, TOO_MANY);
      } else if (email) {
        const route = request.routeOptions.url ?? request.url;
        await consumeOrRefuse(this.perEmail, `${route}:${email}`, reply, TOO_MANY);
      }
    }
    return true;
  }

  private limitsFor(context: ExecutionContext): RouteLimits {
    const handler = context.getHandler();
    let limits = this.routes.get(handler);
    if (!limits) {
      const targets = [handler, context.getClass()];
      const rule = this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_RULE, targets);
      const skip = this.reflector.getAllAndOverride<boolean>(SKIP_GENERAL_RATE_LIMIT, targets) ?? false;
      limits = {
        general: !skip && rule?.kind !== 'machine',
        policy: this.reflector.getAllAndOverride<RateLimitPolicy>(RATE_LIMIT_POLICY, targets),
      };
      this.routes.set(handler, limits);
    }
    return limits;
  }
}

function emailOf(body: unknown): string {
  const email = (body as { email?: unknown } | undefined)?.email;
  return typeof email === 'string' ? email.trim().toLowerCase().slice(0, 254) : '';
}
