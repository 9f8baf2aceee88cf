import { Injectable } from '@nestjs/common';
import { BadRequestError, InvalidCredentialsError } from '../../common/errors/domain-error';
import { BlacklistService } from './blacklist.service';
import { PrincipalRepository } from './principal.repository';
import { AccessTokenDto } from './dto/refresh-token.dto';
import { TokenService } from './token.service';

@Injectable()
export class AuthService {
  constructor(
    private readonly tokens: TokenService,
    private readonly blacklist: BlacklistService,
    private readonly principals: PrincipalRepository,
  ) {}

  /**
   * In the order auth.md fixes: signature and expiry, then the blacklist, then the subject
   * from the database (it must exist and be active), then claims from the stored data.
   */
  async refresh(token: string | undefined): Promise<AccessTokenDto> {
    const claims = this.tokens.verifyRefresh(requireToken(token));
    if (await this.blacklist.isRevoked(token as string)) {
      throw new InvalidCredentialsError('Refresh token has been revoked');
    }
    const accessToken = claims.isAdmin
      ? await this.adminAccess(claims.uuid)
      : await this.userAccess(claims.uuid);
    return { accessToken, tokenType: 'Bearer', expiresIn: this.tokens.accessTtlSeconds };
  }

  /** Idempotent. An already expired (but genuine) token needs no entry: it cannot be used anyway. */
  async revoke(token: string | undefined): Promise<void> {
    const claims = this.tokens.verifyRefresh(requireToken(token), true);
    const expiresAt = new Date(claims.exp * 1000);
    if (expiresAt.getTime() > Date.now()) await this.blacklist.revoke(token as string, expiresAt);
  }

  private async adminAccess(uuid: string): Promise<string> {
    const admin = await this.principals.findAdmin(uuid);
    if (!admin || !admin.isActive)
      throw new InvalidCredentialsError('Account no longer exists or is deactivated');
    return this.tokens.signAdminAccess({
      adminUuid: admin.uuid,
      roleId: admin.role.id,
      roleName: admin.role.name,
    });
  }

  private async userAccess(uuid: string): Promise<string> {
    const user = await this.principals.findUser(uuid);
    if (!user || user.status !== 'active') {
      throw new InvalidCredentialsError('Account no longer exists or is deactivated');
    }
    return this.tokens.signUserAccess({
      userUuid: user.uuid,
      contactUuid: user.contact.uuid,
      companyUuid: user.company.uuid,
    });
  }
}

function requireToken(token: string | undefined): string {
  if (!token) throw new BadRequestError('refreshToken is required (in the body or as a Bearer header)');
  return token;
}
