import { Injectable, UnauthorizedException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { BasicStrategy } from 'passport-http';
import { AppConfig } from '../../../config/app-config';
import { ExpectedSecret, matchesAnySecret } from '../../../common/secrets';
import { runStrategy } from './run-strategy';

/**
 * HTTP Basic for the mail provider's webhook through passport-http. MAIL_PROVIDER_WEBHOOK_USER/
 * PASSWORD, or a comma-separated list of `user:password` pairs in MAIL_PROVIDER_WEBHOOK_PASSWORD
 * for rotation.
 */
@Injectable()
export class MailProviderBasicStrategy {
  private readonly pairs: ExpectedSecret[];
  private readonly strategy: BasicStrategy;

  constructor(config: AppConfig) {
    this.pairs = mailProviderPairs(config).map((pair) => new ExpectedSecret(pair));
    this.strategy = new BasicStrategy(
      { realm: 'mail-provider', passReqToCallback: true },
      (request: WithHeaders, _username: string, _password: string, done: BasicDone) =>
        done(null, this.matches(request) ? { machine: 'mail-provider' } : false),
    );
  }

  /** False when no credentials are configured (the route then answers 503). */
  get configured(): boolean {
    return this.pairs.length > 0;
  }

  /** Passes, or 401 with the Basic challenge. */
  authenticate(request: FastifyRequest, reply: FastifyReply): void {
    if (runStrategy(this.strategy, request).user) return;
    void reply.header('www-authenticate', 'Basic realm="mail-provider"');
    throw new UnauthorizedException('Missing or invalid Basic credentials');
  }

  /**
   * passport-http cuts the password at its first `:` (RFC 7617 allows colons in a password), so
   * the pair is read whole from the header: `user:pa:ss` must not pass as `user:pa`.
   */
  private matches(request: WithHeaders): boolean {
    const pair = basicPair(request.headers.authorization);
    return pair !== undefined && matchesAnySecret(pair, this.pairs);
  }
}

type WithHeaders = { headers: { authorization?: string } };
type BasicDone = (error: null, machine: { machine: 'mail-provider' } | false) => void;

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
