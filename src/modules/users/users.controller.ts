import { Body, Controller, Get, HttpCode, Patch, Post, Put } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { RateLimit } from '../../common/rate-limit/rate-limit.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { CurrentUser, Public, UserAuth } from '../auth/access.decorators';
import { CredentialsService } from '../auth/credentials.service';
import {
  ChangePasswordDto,
  EmailDto,
  LoginDto,
  ResetPasswordDto,
  TokenDto,
  UpdateMeDto,
} from './dto/user-requests.dto';
import { AcceptInviteDto, InvitationAcceptedDto } from './dto/invitation.dto';
import { EmailVerifiedDto, MeDto, UserLoginDto } from './dto/user-response.dto';
import { User } from './entities/user.entity';
import { UsersService } from './users.service';

@ApiTags('users')
// POST /api/v1/users/register is CompanyRegistrationController (companies area: it writes the company).
@Controller('api/v1/users')
export class UsersController {
  constructor(
    private readonly users: UsersService,
    private readonly credentials: CredentialsService,
  ) {}

  /**
   * Log a customer user in.
   *
   * @remarks
   * Public; rate limited per IP and e-mail address (LOGIN_RATE_LIMIT_PER_MINUTE) on top of the per-IP limit.
   * Returns a short-lived access token (JWT_ACCESS_TTL, 60 s by default), a refresh token (JWT_REFRESH_TTL, 1
   * day) and the user, contact and company exactly as GET /api/v1/users/me returns them. 401 for a wrong
   * e-mail address or password (the same answer for both); 403 when the e-mail address is not verified yet or
   * the user is suspended. A suspended company does not block its users' login.
   */
  @Post('login')
  @Public()
  @HttpCode(200)
  @RateLimit('login')
  @ResponseMessage('Login successful')
  @ApiEnvelope(UserLoginDto)
  @ApiErrors(400, 401, 403, 429)
  async login(@Body() dto: LoginDto): Promise<UserLoginDto> {
    const { subject: user, ...tokens } = await this.credentials.login('user', dto.email, dto.password);
    return { ...tokens, ...MeDto.from(user) };
  }

  /**
   * Verify an e-mail address with the token of the verification e-mail.
   *
   * @remarks
   * Public: the token of the e-mail's link (valid for 1 day) is the credential. Marks the address verified,
   * after which the user can log in; a token for an address already verified answers 200 as well. 401 for an
   * invalid, expired or wrong-purpose token.
   */
  @Post('verify-email')
  @Public()
  @HttpCode(200)
  @ResponseMessage('Email verified', (r: EmailVerifiedDto) =>
    r.alreadyVerified ? 'Email already verified' : 'Email verified',
  )
  @ApiEnvelope(EmailVerifiedDto)
  @ApiErrors(400, 401, 429)
  verifyEmail(@Body() dto: TokenDto): Promise<EmailVerifiedDto> {
    return this.users.verifyEmail(dto.token);
  }

  /**
   * Send the verification e-mail again.
   *
   * @remarks
   * Public; rate limited per e-mail address (EMAIL_RATE_LIMIT_PER_HOUR) on top of the per-IP limit. Always
   * answers 200 with an empty object, whether or not the address belongs to an unverified account, so that
   * accounts cannot be discovered through it.
   */
  @Post('resend-verification')
  @Public()
  @HttpCode(200)
  @RateLimit('email-per-hour')
  @ResponseMessage('If the address belongs to an unverified account, a verification e-mail is on its way')
  @ApiEnvelope()
  @ApiErrors(400, 429)
  async resendVerification(@Body() dto: EmailDto): Promise<object> {
    await this.users.resendVerification(dto.email);
    return {};
  }

  /**
   * Request a password reset e-mail.
   *
   * @remarks
   * Public; rate limited per e-mail address (EMAIL_RATE_LIMIT_PER_HOUR) on top of the per-IP limit. Always
   * answers 200 with an empty object, whether or not the address belongs to an account. The e-mail links to
   * the front end with a reset token valid for 1 day, to be sent to POST /api/v1/users/reset-password.
   */
  @Post('forgot-password')
  @Public()
  @HttpCode(200)
  @RateLimit('email-per-hour')
  @ResponseMessage('If the address belongs to an account, a reset e-mail is on its way')
  @ApiEnvelope()
  @ApiErrors(400, 429)
  async forgotPassword(@Body() dto: EmailDto): Promise<object> {
    await this.credentials.forgotPassword('user', dto.email);
    return {};
  }

  /**
   * Set a new password with the token of the reset e-mail.
   *
   * @remarks
   * Public: the reset token is the credential. It is single-use: once the password has changed it is refused
   * (401), as is an invalid or expired one. Every refresh token issued before the reset stops working. An
   * invited member who resets the password has proved the mailbox and becomes verified and active.
   */
  @Post('reset-password')
  @Public()
  @HttpCode(200)
  @ResponseMessage('Password has been reset')
  @ApiEnvelope()
  @ApiErrors(400, 401, 429)
  async resetPassword(@Body() dto: ResetPasswordDto): Promise<object> {
    await this.credentials.resetPassword('user', dto.token, dto.password);
    return {};
  }

  /**
   * Accept a company invitation and choose a password.
   *
   * @remarks
   * Public: the token of the invitation e-mail is the credential. The invited member becomes `active` with a
   * verified e-mail address and can log in. 401 for an invalid, expired or already used token; 403 when the
   * user has been suspended.
   */
  @Post('accept-invite')
  @Public()
  @HttpCode(200)
  @ResponseMessage('Invitation accepted')
  @ApiEnvelope(InvitationAcceptedDto)
  @ApiErrors(400, 401, 403, 429)
  acceptInvite(@Body() dto: AcceptInviteDto): Promise<InvitationAcceptedDto> {
    return this.users.acceptInvite(dto);
  }

  /**
   * Read the signed-in user's profile.
   *
   * @remarks
   * Any active user (access token). Returns the user, the contact, a summary of the company and its
   * relayStatus. 401 for a missing, invalid or expired access token, or an account suspended, deactivated or
   * deleted since it was issued. 403 for an admin token.
   */
  @Get('me')
  @UserAuth()
  @ResponseMessage('Profile fetched')
  @ApiEnvelope(MeDto)
  me(@CurrentUser() user: User): MeDto {
    return this.users.me(user);
  }

  /**
   * Update the signed-in user's profile.
   *
   * @remarks
   * Any active user. Changes the fields given among `fullName`, `phone` and `position`, and returns the same
   * shape as GET /api/v1/users/me. 400 for an invalid or unknown field.
   */
  @Patch('me')
  @UserAuth()
  @ResponseMessage('Profile updated')
  @ApiEnvelope(MeDto)
  @ApiErrors(400)
  updateMe(@CurrentUser() user: User, @Body() dto: UpdateMeDto): Promise<MeDto> {
    return this.users.updateMe(user, dto);
  }

  /**
   * Change the signed-in user's password.
   *
   * @remarks
   * Any active user. Needs the current password (400 when it is wrong); the new one is 10 to 128 characters.
   * Every refresh token issued before the change stops working. 409 when another request changed the password
   * meanwhile: try again.
   */
  @Put('me/password')
  @UserAuth()
  @ResponseMessage('Password changed')
  @ApiEnvelope()
  @ApiErrors(400)
  async changePassword(@CurrentUser() user: User, @Body() dto: ChangePasswordDto): Promise<object> {
    await this.credentials.changePassword('user', user.id, dto.currentPassword, dto.newPassword);
    return {};
  }
}
