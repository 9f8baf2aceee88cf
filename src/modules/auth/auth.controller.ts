import { Body, Controller, createParamDecorator, ExecutionContext, HttpCode, Post } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { ApiEnvelope } from '../../common/swagger/api-envelope.decorator';
import { RefreshTokenAuth } from './access.decorators';
import { AuthService } from './auth.service';
import { AccessTokenDto, RefreshTokenDto } from './dto/refresh-token.dto';

/** The token of an `Authorization: Bearer …` header, if any. */
const BearerToken = createParamDecorator((_data: unknown, ctx: ExecutionContext): string | undefined => {
  const authorization = ctx.switchToHttp().getRequest<FastifyRequest>().headers.authorization;
  return authorization && /^Bearer /i.test(authorization)
    ? authorization.slice(7).trim() || undefined
    : undefined;
});

@ApiTags('auth')
@Controller('api/v1')
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  /**
   * Get a new access token with a refresh token.
   *
   * @remarks
   * For users and admins alike: the refresh token goes in the body (`refreshToken`) or in an `Authorization:
   * Bearer` header. The new token's claims are read from the database, so a role or company changed since
   * login shows at once. 400 when no token is given; 401 when it is badly signed, expired or revoked, was
   * issued before the last password change, or its user or admin is gone or deactivated.
   */
  @Post('refresh')
  @HttpCode(200)
  @RefreshTokenAuth()
  @ResponseMessage('Access token refreshed')
  @ApiEnvelope(AccessTokenDto)
  refresh(@Body() dto: RefreshTokenDto, @BearerToken() bearer?: string): Promise<AccessTokenDto> {
    return this.auth.refresh(dto.refreshToken ?? bearer);
  }

  /**
   * Revoke a refresh token (log out).
   *
   * @remarks
   * For users and admins alike: the refresh token goes in the body (`refreshToken`) or in an `Authorization:
   * Bearer` header. The token is refused everywhere (every replica) from then on. Revoking a token already
   * revoked answers 200. 400 when no token is given; 401 when it is not a valid refresh token.
   */
  @Post('revoke')
  @HttpCode(200)
  @RefreshTokenAuth()
  @ResponseMessage('Refresh token revoked')
  @ApiEnvelope()
  async revoke(@Body() dto: RefreshTokenDto, @BearerToken() bearer?: string): Promise<object> {
    await this.auth.revoke(dto.refreshToken ?? bearer);
    return {};
  }
}
