import { CanActivate, ExecutionContext, HttpException, HttpStatus, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppConfig } from '../../config/app-config';
import { ACCESS_RULE, AccessRule } from '../../modules/auth/access';
import { apiKeyDigest, apiKeyOf } from '../../modules/auth/api-key-secret';
import { RATE_LIMIT_POLICY, RateLimitPolicy, SKIP_GENERAL_RATE_LIMIT } from './rate-limit.decorator';
import { RATE_LIMIT_STORE, RateLimitHit, RateLimitStore } from './rate-limit.store';

const MINUTE = 60_000;
const HOUR = 3_600_000;

interface Check {
  key: string;
  windowMs: number;
  limit: number;
}

interface RouteLimits {
  general: boolean;
  policy?: RateLimitPolicy;
}

/**
 * The rate limits of quality.md. Runs before authentication so failed attempts count too.
 * Machine-credential routes are not counted.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly routes = new WeakMap<object, RouteLimits>();

  constructor(
    private readonly reflector: Reflector,
    private readonly config: AppConfig,
    @Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore,
  ) {}

  /** Synchronous with the in-memory store: no promise on the hot path. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const limits = this.limitsFor(context);
    if (!limits.general && !limits.policy) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const env = this.config.env;

    const checks: Check[] = [];
    if (limits.general) {
      // A customer API key is counted as itself, wherever it calls from (platform.md "Using a key").
      const apiKey = apiKeyOf(request);
      checks.push(
        apiKey === undefined
          ? { key: `ip:${request.ip}`, windowMs: MINUTE, limit: env.RATE_LIMIT_PER_MINUTE }
          : {
              key: `api-key:${apiKeyDigest(apiKey)}`,
              windowMs: MINUTE,
              limit: env.API_KEY_RATE_LIMIT_PER_MINUTE,
            },
      );
    }
    if (limits.policy) {
      const email = emailOf(request.body);
      if (limits.policy === 'login') {
        checks.push({
          key: `login:${request.ip}:${email}`,
          windowMs: MINUTE,
          limit: env.LOGIN_RATE_LIMIT_PER_MINUTE,
        });
      } else if (email) {
        const route = request.routeOptions.url ?? request.url;
        checks.push({ key: `email:${route}:${email}`, windowMs: HOUR, limit: env.EMAIL_RATE_LIMIT_PER_HOUR });
      }
    }
    return this.enforceAll(reply, checks, 0);
  }

  private enforceAll(reply: FastifyReply, checks: Check[], from: number): boolean | Promise<boolean> {
    for (let i = from; i < checks.length; i++) {
      const { key, windowMs, limit } = checks[i];
      const hit = this.store.hit(key, windowMs);
      if (hit instanceof Promise) {
        return hit.then((h) => {
          this.enforce(reply, h, limit);
          return this.enforceAll(reply, checks, i + 1);
        });
      }
      this.enforce(reply, hit, limit);
    }
    return true;
  }

  private enforce(reply: FastifyReply, hit: RateLimitHit, limit: number): void {
    if (hit.count <= limit) return;
    void reply.header('retry-after', String(Math.max(1, Math.ceil(hit.resetInMs / 1000))));
    throw new HttpException('Too many requests, try again later', HttpStatus.TOO_MANY_REQUESTS);
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
