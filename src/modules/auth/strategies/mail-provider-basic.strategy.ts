import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { BasicStrategy } from 'passport-http';
import { AppConfig } from '../../../config/app-config';
import { matchesAnySecret } from '../../../common/secrets';

/**
 * HTTP Basic for the mail provider's webhook. MAIL_PROVIDER_WEBHOOK_USER/PASSWORD, or a
 * comma-separated list of `user:password` pairs in MAIL_PROVIDER_WEBHOOK_PASSWORD for rotation.
 */
@Injectable()
export class MailProviderBasicStrategy extends PassportStrategy(BasicStrategy, 'mail-provider-basic') {
  private readonly pairs: string[];

  constructor(config: AppConfig) {
    super({ realm: 'mail-provider', passReqToCallback: true });
    this.pairs = mailProviderPairs(config);
  }

  /**
   * passport-http cuts the password at its first `:` (RFC 7617 allows colons in a password), so
   * the pair is read whole from the header: `user:pa:ss` must not pass as `user:pa`.
   */
  validate(
    request: FastifyRequest,
    _username: string,
    _password: string,
  ): { machine: 'mail-provider' } | false {
    const pair = basicPair(request.headers.authorization);
    return pair !== undefined && matchesAnySecret(pair, this.pairs) ? { machine: 'mail-provider' } : false;
  }
}

/** The decoded `user:password` of an `Authorization: Basic …` header. */
function basicPair(authorization: string | undefined): string | undefined {
  const match = authorization ? /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(authorization) : null;
  return match ? Buffer.from(match[1], 'base64').toString('utf8') : undefined;
}

/**
 * The accepted `user:password` pairs: always USER:PASSWORD; and when PASSWORD is a comma-separated
 * list whose every item is itself `user:password`, each of those too (old and new during a rotation).
 */
export function mailProviderPairs(config: AppConfig): string[] {
  const user = config.env.MAIL_PROVIDER_WEBHOOK_USER;
  const password = config.env.MAIL_PROVIDER_WEBHOOK_PASSWORD;
  if (!user || !password) return [];
  const items = password.split(',').map((p) => p.trim());
  const rotation = items.length > 1 && items.every((p) => /^[^:]+:.+$/.test(p)) ? items : [];
  return [`${user}:${password}`, ...rotation];
}
