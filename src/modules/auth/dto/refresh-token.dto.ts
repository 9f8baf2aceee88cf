import { IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { Omittable } from '../../../common/validation/presence';

export class RefreshTokenDto {
  /** The refresh token; may instead be sent as `Authorization: Bearer <refresh token>`. */
  @Omittable()
  @IsString()
  @IsNotEmpty()
  @MaxLength(4096)
  refreshToken?: string;
}

export class AccessTokenDto {
  accessToken: string;
  tokenType: 'Bearer';
  /** Seconds until the access token expires. */
  expiresIn: number;
}
