import { ApiProperty } from '@nestjs/swagger';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { Omittable } from '../../../common/validation/presence';

/** The CRM's OAuth redirect: `?code&state`, or `?error&state` when the admin declined. */
export class CrmRedirectQueryDto {
  /** The signed state `/auth-crm` put in the authorisation URL. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(1000)
  state: string;

  /** The authorisation code to exchange for tokens. */
  @Omittable()
  @IsString()
  @IsNotEmpty()
  @MaxLength(2000)
  code?: string;

  /** Why the CRM did not grant access (e.g. `access_denied`). */
  @Omittable()
  @IsString()
  @MaxLength(200)
  error?: string;
}

export class CrmAuthorizationDto {
  /** `{CRM_ACCOUNTS_URL}/oauth/v2/auth?…&state=…`: the page where an admin grants access (state valid 10 minutes, once). */
  authorizationUrl: string;
}

export class CrmConnectedDto {
  @ApiProperty({ enum: [true] }) connected: true;
  /** `zoho`. */
  provider: string;
  /** When the access token expires (it is refreshed on its own). */
  @ApiProperty({ format: 'date-time' }) expiresAt: string;
}

export class CrmAccountDto {
  /** The company's Account id in the CRM. */
  crmAccountId: string;
}
