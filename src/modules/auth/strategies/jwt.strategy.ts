import { Injectable, UnauthorizedException } from '@nestjs/common';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { AppConfig } from '../../../config/app-config';
import type { AccessClaims } from '../principal';
import { ACCESS_TOKEN_ALGORITHM, ACCESS_TOKEN_CLOCK_TOLERANCE_S } from '../token.service';
import { runStrategy } from './run-strategy';

/** Bearer access tokens through passport-jwt: HS256 only, the access secret (a KeyObject), at most 5 s of clock leeway. */
@Injectable()
export class JwtStrategy {
  private readonly strategy: Strategy;

  constructor(config: AppConfig) {
    this.strategy = new Strategy(
      {
        jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
        // passport-jwt's types say string | Buffer; jsonwebtoken takes the KeyObject (~50x faster with it).
        secretOrKey: config.keys.access as unknown as string,
        algorithms: [ACCESS_TOKEN_ALGORITHM],
        jsonWebTokenOptions: { clockTolerance: ACCESS_TOKEN_CLOCK_TOLERANCE_S },
        ignoreExpiration: false,
      },
      (payload: Record<string, unknown>, done: (error: null, claims: AccessClaims | false) => void) =>
        done(null, accessClaims(payload)),
    );
  }

  /** The verified claims of the request's bearer token, or 401 saying what is wrong with it. */
  authenticate(request: unknown): AccessClaims {
    const outcome = runStrategy<AccessClaims>(this.strategy, request);
    if (outcome.user) return outcome.user;
    const info = outcome.info;
    const msg =
      info instanceof Error && info.name === 'TokenExpiredError'
        ? 'Access token has expired'
        : info instanceof Error && info.message === 'No auth token'
          ? 'Missing bearer token'
          : 'Invalid access token';
    throw new UnauthorizedException(msg);
  }
}

/**
 * The claims must be one of the two access-token shapes, with an `exp` (jsonwebtoken accepts a
 * token without one; auth.md refuses it); anything else is not an access token.
 */
function accessClaims(payload: Record<string, unknown>): AccessClaims | false {
  if (typeof payload.exp !== 'number') return false;
  if (typeof payload.adminUuid === 'string' && typeof payload.roleId === 'number') {
    return { adminUuid: payload.adminUuid, roleId: payload.roleId, roleName: String(payload.roleName) };
  }
  if (typeof payload.userUuid === 'string' && payload.isAdmin === false) {
    return {
      userUuid: payload.userUuid,
      contactUuid: String(payload.contactUuid),
      companyUuid: String(payload.companyUuid),
      isAdmin: false,
    };
  }
  return false;
}
