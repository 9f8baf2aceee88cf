import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { AppConfig } from '../../../config/app-config';
import type { AccessClaims } from '../principal';
import { ACCESS_TOKEN_ALGORITHM, ACCESS_TOKEN_CLOCK_TOLERANCE_S } from '../token.service';

/** Bearer access tokens: HS256 only, the access secret (a KeyObject), at most 5 s of clock leeway. */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(config: AppConfig) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      // passport-jwt's types say string | Buffer, jsonwebtoken accepts the KeyObject (and is ~50x faster with it).
      secretOrKey: config.keys.access as unknown as string,
      algorithms: [ACCESS_TOKEN_ALGORITHM],
      jsonWebTokenOptions: { clockTolerance: ACCESS_TOKEN_CLOCK_TOLERANCE_S },
      ignoreExpiration: false,
    });
  }

  /** The claims must be one of the two access-token shapes; anything else is not an access token. */
  validate(payload: Record<string, unknown>): AccessClaims | false {
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
}
