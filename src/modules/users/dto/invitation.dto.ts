import { IsNotEmpty, IsString, MaxLength, MinLength } from 'class-validator';
import { UserDto } from './user-response.dto';
import { PASSWORD_MAX, PASSWORD_MIN } from './user-requests.dto';

/** `POST /api/v1/users/accept-invite`. */
export class AcceptInviteDto {
  /** The token from the invitation e-mail link. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(4096)
  token: string;

  /** The member's new password, 10 to 128 characters. */
  @IsString()
  @MinLength(PASSWORD_MIN)
  @MaxLength(PASSWORD_MAX)
  password: string;
}

export class InvitationAcceptedDto {
  user: UserDto;
}
