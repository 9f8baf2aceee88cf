import { Injectable } from '@nestjs/common';
import { BadRequestError, InvalidCredentialsError } from '../../common/errors/domain-error';
import { BlacklistService } from './blacklist.service';
import { CredentialsService } from './credentials.service';
import { AccessTokenDto } from './dto/refresh-token.dto';
import { TokenService } from './token.service';

@Injectable()
export class AuthService {
  constructor(
    private readonly tokens: TokenService,
    private readonly blacklist: BlacklistService,
    private readonly credentials: CredentialsService,
  ) {}

  /**
   * In the order auth.md fixes: signature and expiry, then the blacklist, then the subject
   * from the database (it must exist and be active, and its password must not have changed
   * since the token was issued), then claims from the stored data.
   */
  async refresh(token: string | undefined): Promise<AccessTokenDto> {
    const claims = this.tokens.verifyRefresh(requireToken(token));
    if (await this.blacklist.isRevoked(token as string)) {
      throw new InvalidCredentialsError('Refresh token has been revoked');
    }
    const accessToken = await this.credentials.renewAccess(claims);
    return { accessToken, tokenType: 'Bearer', expiresIn: this.tokens.accessTtlSeconds };
  }

  /** Idempotent. An already expired (but genuine) token needs no entry: it cannot be used anyway. */
  async revoke(token: string | undefined): Promise<void> {
    const claims = this.tokens.verifyRefresh(requireToken(token), true);
    const expiresAt = new Date(claims.exp * 1000);
    if (expiresAt.getTime() > Date.now()) await this.blacklist.revoke(token as string, expiresAt);
  }
}

function requireToken(token: string | undefined): string {
  if (!token) throw new BadRequestError('refreshToken is required (in the body or as a Bearer header)');
  return token;
}
