import { ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import type { FastifyReply } from 'fastify';

/** passport-jwt behind a message that says what is wrong with the bearer token. */
@Injectable()
export class BearerTokenGuard extends AuthGuard('jwt') {
  override handleRequest<T>(err: unknown, claims: T, info: unknown): T {
    if (err || !claims) {
      const reason = info instanceof Error ? info.name : '';
      const msg =
        reason === 'TokenExpiredError'
          ? 'Access token has expired'
          : info instanceof Error && info.message === 'No auth token'
            ? 'Missing bearer token'
            : 'Invalid access token';
      throw new UnauthorizedException(msg);
    }
    return claims;
  }
}

/** passport-http Basic for the mail provider; a refusal carries the Basic challenge. */
@Injectable()
export class MailProviderBasicGuard extends AuthGuard('mail-provider-basic') {
  override handleRequest<T>(err: unknown, machine: T, _info: unknown, context: ExecutionContext): T {
    if (err || !machine) {
      void context
        .switchToHttp()
        .getResponse<FastifyReply>()
        .header('www-authenticate', 'Basic realm="mail-provider"');
      throw new UnauthorizedException('Missing or invalid Basic credentials');
    }
    return machine;
  }
}
