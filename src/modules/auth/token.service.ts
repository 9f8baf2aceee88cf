import { Injectable } from '@nestjs/common';
import * as jwt from 'jsonwebtoken';
import { randomUUID, KeyObject } from 'node:crypto';
import { AppConfig } from '../../config/app-config';
import { durationToSeconds } from '../../common/duration';
import { InvalidCredentialsError } from '../../common/errors/domain-error';
import type { AdminAccessClaims, UserAccessClaims } from './principal';

export interface RefreshClaims {
  uuid: string;
  isAdmin: boolean;
  jti: string;
  /** Seconds with millisecond precision (see signRefresh). */
  iat: number;
  exp: number;
}

export interface VerificationClaims {
  uuid: string;
  email: string;
  purpose: 'verify-email' | 'invite';
  pwv?: number;
}

export interface ResetClaims {
  uuid: string;
  email: string;
  isAdmin: boolean;
  pwv: number;
}

const ALGORITHM = 'HS256';
const CLOCK_TOLERANCE_S = 5;
const ONE_DAY_S = 86400;

/** Issues and verifies the token kinds of auth.md, each with its own KeyObject secret. */
@Injectable()
export class TokenService {
  readonly accessTtlSeconds: number;
  private readonly refreshTtlSeconds: number;

  constructor(private readonly config: AppConfig) {
    this.accessTtlSeconds = durationToSeconds(config.env.JWT_ACCESS_TTL);
    this.refreshTtlSeconds = durationToSeconds(config.env.JWT_REFRESH_TTL);
  }

  signUserAccess(claims: Omit<UserAccessClaims, 'isAdmin'>): string {
    const payload: UserAccessClaims = { ...claims, isAdmin: false };
    return this.sign(payload, this.config.keys.access, this.accessTtlSeconds);
  }

  signAdminAccess(claims: AdminAccessClaims): string {
    return this.sign({ ...claims }, this.config.keys.access, this.accessTtlSeconds);
  }

  /**
   * `iat` has millisecond precision (a NumericDate may be non-integer, RFC 7519 §2), so refresh
   * can refuse a token issued earlier in the same second as a password change and still accept
   * one issued just after it. `issuedAt` (ms) lets a login date its token from before it read the
   * password, so a login racing a password change never outlives it. `exp` stays whole seconds.
   */
  signRefresh(uuid: string, isAdmin: boolean, issuedAt = Date.now()): string {
    const iat = issuedAt / 1000;
    return jwt.sign(
      { uuid, isAdmin, jti: randomUUID(), iat, exp: Math.floor(iat) + this.refreshTtlSeconds },
      this.config.keys.refresh,
      { algorithm: ALGORITHM },
    );
  }

  signVerification(claims: VerificationClaims): string {
    return this.sign({ ...claims }, this.config.keys.verification, ONE_DAY_S);
  }

  signReset(claims: ResetClaims): string {
    return this.sign({ ...claims }, this.config.keys.reset, ONE_DAY_S);
  }

  /** Verifies signature and expiry; with `ignoreExpiration` only the signature (for revoke: `exp` must still be there). */
  verifyRefresh(token: string, ignoreExpiration = false): RefreshClaims {
    const claims = this.verify(
      token,
      this.config.keys.refresh,
      'Invalid or expired refresh token',
      ignoreExpiration,
    );
    if (
      typeof claims.uuid !== 'string' ||
      typeof claims.isAdmin !== 'boolean' ||
      typeof claims.iat !== 'number'
    ) {
      throw new InvalidCredentialsError('Invalid or expired refresh token');
    }
    return claims as unknown as RefreshClaims;
  }

  verifyVerification(token: string): VerificationClaims {
    const claims = this.verify(token, this.config.keys.verification, 'Invalid or expired token');
    if (typeof claims.uuid !== 'string' || typeof claims.email !== 'string') {
      throw new InvalidCredentialsError('Invalid or expired token');
    }
    return claims as unknown as VerificationClaims;
  }

  verifyReset(token: string): ResetClaims {
    const claims = this.verify(token, this.config.keys.reset, 'Invalid or expired reset token');
    if (
      typeof claims.uuid !== 'string' ||
      typeof claims.pwv !== 'number' ||
      typeof claims.isAdmin !== 'boolean'
    ) {
      throw new InvalidCredentialsError('Invalid or expired reset token');
    }
    return claims as unknown as ResetClaims;
  }

  private sign(payload: object, key: KeyObject, ttlSeconds: number): string {
    return jwt.sign(payload, key, { algorithm: ALGORITHM, expiresIn: ttlSeconds });
  }

  private verify(token: string, key: KeyObject, message: string, ignoreExpiration = false): jwt.JwtPayload {
    try {
      const claims = jwt.verify(token, key, {
        algorithms: [ALGORITHM],
        clockTolerance: CLOCK_TOLERANCE_S,
        ignoreExpiration,
      });
      if (typeof claims === 'string') throw new Error('string payload');
      // jsonwebtoken accepts a token without exp; auth.md refuses it (every token kind ends).
      if (typeof claims.exp !== 'number') throw new Error('no exp');
      return claims;
    } catch {
      throw new InvalidCredentialsError(message);
    }
  }
}

export const ACCESS_TOKEN_ALGORITHM = ALGORITHM;
export const ACCESS_TOKEN_CLOCK_TOLERANCE_S = CLOCK_TOLERANCE_S;
